// Package ptr holds the two pointer helpers every area needs for optional input fields (a nil
// pointer is "not given"), written once instead of a deref per package.
package ptr

// To returns a pointer to a copy of v.
func To[T any](v T) *T { return &v }

// Deref returns *p, or T's zero value when p is nil.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// Or returns *p, or def when p is nil.
func Or[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
