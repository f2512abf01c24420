package store

// Wrapper is a Store over another one (one that counts its operations,
// say): it implements the Store methods and leaves the optional
// capabilities to the store it wraps, which As finds.
type Wrapper interface {
	Store
	// Unwrap returns the wrapped store.
	Unwrap() Store
}

// As returns s as the optional capability T (Notifier, Tailer,
// PushHints, ...): s itself if it has it, else the first store down its
// chain of Wrappers that does.
func As[T any](s Store) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		w, ok := s.(Wrapper)
		if !ok {
			break
		}
		s = w.Unwrap()
	}
	var zero T
	return zero, false
}
