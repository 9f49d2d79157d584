package httpx

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// A body of exactly the limit ends normally; one byte more is ErrBodyTooLarge, and the bytes
// handed out never pass the limit.
func TestLimited(t *testing.T) {
	for _, tc := range []struct {
		size    int
		tooLong bool
	}{{0, false}, {9, false}, {10, false}, {11, true}, {1000, true}} {
		for name, r := range map[string]io.Reader{
			"whole":    strings.NewReader(strings.Repeat("x", tc.size)),
			"one byte": iotest.OneByteReader(strings.NewReader(strings.Repeat("x", tc.size))),
		} {
			var got bytes.Buffer
			_, err := io.Copy(&got, &limited{r: r, left: 10})
			if errors.Is(err, ErrBodyTooLarge) != tc.tooLong || (!tc.tooLong && err != nil) {
				t.Errorf("%d bytes (%s): %v", tc.size, name, err)
			}
			if got.Len() > 10 || (!tc.tooLong && got.Len() != tc.size) {
				t.Errorf("%d bytes (%s): read %d", tc.size, name, got.Len())
			}
		}
	}
}
