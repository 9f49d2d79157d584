package documents

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
)

// MaxTextBytes bounds the text kept of one document (documents.text, GET /search): 100,000
// bytes, far under PostgreSQL's tsvector limit (1 MB of lexemes, search_document_tsv), so no
// upload fails on its index. A longer text layer is cut at a character boundary: the search
// finds a document by its first pages.
const MaxTextBytes = 100_000

// textTimeout bounds one pdftotext run: a hostile or huge PDF costs at most this much of an
// upload and is then stored without text.
const textTimeout = 10 * time.Second

// textExtractor reads the text layer of uploaded PDFs with poppler's pdftotext (Debian's
// poppler-utils, found in PATH once per service). Extraction never fails an upload: without
// the tool, on a PDF it cannot read, or past textTimeout the document is stored with text ""
// (found by its filename only). The missing tool is logged once per service, not per upload.
type textExtractor struct {
	lookOnce sync.Once
	path     string // "" when pdftotext is not in PATH
	warnOnce sync.Once
}

func newTextExtractor() *textExtractor { return &textExtractor{} }

// Text is the text layer of content when it is a PDF (mediaType as Sniff gives it), cleaned for
// a text column (valid UTF-8, no NUL) and at most MaxTextBytes; "" otherwise.
func (x *textExtractor) Text(ctx context.Context, mediaType string, content []byte) string {
	if base, _, _ := strings.Cut(mediaType, ";"); x == nil || strings.TrimSpace(base) != "application/pdf" {
		return ""
	}
	x.lookOnce.Do(func() { x.path, _ = exec.LookPath("pdftotext") })
	if x.path == "" {
		x.warnOnce.Do(func() {
			zerolog.Ctx(ctx).Warn().Msg("pdftotext not in PATH (Debian: poppler-utils): PDFs are stored without text; GET /search finds them by filename only")
		})
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, textTimeout)
	defer cancel()
	// The PDF on standard input, the text on standard output: no temporary file. An empty
	// environment: the parser of an untrusted file gets none of the server's secrets.
	cmd := exec.CommandContext(ctx, x.path, "-q", "-enc", "UTF-8", "-nopgbrk", "-", "-")
	cmd.Env = []string{}
	cmd.Stdin = bytes.NewReader(content)
	out := &capped{max: MaxTextBytes + utf8.UTFMax}
	cmd.Stdout = out
	if err := cmd.Run(); err != nil {
		// A PDF poppler cannot read (damaged, encrypted) is a document all the same.
		zerolog.Ctx(ctx).Info().Err(err).Msg("pdf text not extracted: the document is stored without text")
		return ""
	}
	return cleanText(out.buf.Bytes())
}

// cleanText makes b storable and bounded: invalid UTF-8 and NUL (which PostgreSQL's text
// refuses) become spaces, and the text is cut at the last whole character within MaxTextBytes.
func cleanText(b []byte) string {
	s := strings.ToValidUTF8(string(b), " ")
	s = strings.ReplaceAll(s, "\x00", " ")
	if len(s) > MaxTextBytes {
		cut := MaxTextBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return strings.TrimSpace(s)
}

// capped keeps the first max bytes written to it and drops the rest, reporting every write as
// whole so that the tool runs to its end instead of failing on a closed pipe.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
