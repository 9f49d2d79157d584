package documents

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// Catches: a NUL or invalid UTF-8 reaching PostgreSQL (the upload would fail), a cut inside a
// character, text beyond MaxTextBytes (a tsvector over its limit).
func TestCleanText(t *testing.T) {
	if got := cleanText([]byte("a\x00b\xffc")); got != "a b c" {
		t.Errorf("cleanText = %q", got)
	}
	long := strings.Repeat("ü", MaxTextBytes) // 2 bytes each
	got := cleanText([]byte(long))
	if len(got) > MaxTextBytes || !utf8.ValidString(got) || len(got) < MaxTextBytes-1 {
		t.Errorf("cut to %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

// Catches: extraction attempted on other types, a nil extractor (a Service built without
// NewService) panicking.
func TestTextOnlyForPDF(t *testing.T) {
	var x *textExtractor
	if got := x.Text(context.Background(), "application/pdf", []byte("%PDF-")); got != "" {
		t.Errorf("nil extractor: %q", got)
	}
	if got := newTextExtractor().Text(context.Background(), "text/plain; charset=utf-8", []byte("hello")); got != "" {
		t.Errorf("text/plain: %q", got)
	}
}
