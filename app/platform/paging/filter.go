package paging

import entsql "entgo.io/ent/dialect/sql"

// Filter is the predicate of one optional list filter, for the list's ent query: pred(*v) when
// the filter is given, nothing when v is nil (a list's nil filter fields do not filter). One
// line per filter instead of an if block each.
//
//	q.Where(paging.Filter(f.ContactID, contract.ContactID), paging.Enum(f.Status, contract.StatusEQ))
func Filter[T any, P ~func(*entsql.Selector)](v *T, pred func(T) P) func(*entsql.Selector) {
	if v == nil {
		return func(*entsql.Selector) {}
	}
	return pred(*v)
}

// Enum is Filter for an enum column, whose filter value arrives as text (httpx.QueryEnum checked
// it against the enum's values).
func Enum[E ~string, P ~func(*entsql.Selector)](v *string, pred func(E) P) func(*entsql.Selector) {
	if v == nil {
		return func(*entsql.Selector) {}
	}
	return pred(E(*v))
}
