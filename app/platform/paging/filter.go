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
