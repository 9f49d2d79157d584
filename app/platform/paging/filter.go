package paging

// If is the predicate pred(*v) when the optional filter value v is given, and none when it is
// nil: a list's filters read as one line each,
//
//	q.Where(paging.If(f.ContactID, task.ContactID)...)
//
// instead of a nil check around every q.Where.
func If[T, P any](v *T, pred func(T) P) []P {
	if v == nil {
		return nil
	}
	return []P{pred(*v)}
}

// In is the predicate pred(xs...) with the query's strings as the column's enum type E when
// the filter lists any value, and none when it lists none:
//
//	q.Where(paging.In(f.Statuses, task.StatusIn)...)
func In[E ~string, P any](xs []string, pred func(...E) P) []P {
	if len(xs) == 0 {
		return nil
	}
	es := make([]E, len(xs))
	for i, x := range xs {
		es[i] = E(x)
	}
	return []P{pred(es...)}
}

// Enum is If for a column of enum type E the query names by a string:
//
//	q.Where(paging.Enum(f.Source, lead.SourceEQ)...)
func Enum[E ~string, P any](v *string, pred func(E) P) []P {
	if v == nil {
		return nil
	}
	return []P{pred(E(*v))}
}
