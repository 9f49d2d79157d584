package commission

import "io"

func readGDV(src io.Reader, st *state) error { return unreadable("gdv_0400: not implemented yet") }
