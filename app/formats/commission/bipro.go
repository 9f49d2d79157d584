package commission

import "io"

func readBiPRO(src io.Reader, st *state) error { return unreadable("bipro_430_5: not implemented yet") }
