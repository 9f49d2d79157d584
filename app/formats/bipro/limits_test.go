package bipro

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
)

// TestShipment_TrailingWhiteSpace: a shipment that ends in a newline (or more white space)
// after its root element is read like one that does not. Bug (issue 20, item 7): the filter
// kept the input's end as its error and Open returned a bare io.EOF, which the worker retried
// 25 times with the transfer left pending.
func TestShipment_TrailingWhiteSpace(t *testing.T) {
	t.Parallel()
	doc := envelope(document("a.gdv", "", wrap64(gdvFile(t, 3, 1))))
	for _, tail := range []string{"\n", "\r\n", " \n\t\n", "\n<!-- end -->\n"} {
		f, _ := readShipment(t, []byte(doc+tail))
		if len(f.Contracts) != 3 {
			t.Errorf("tail %q: %d contracts, want 3", tail, len(f.Contracts))
		}
	}
	// Cut short it is still refused as a format error with a message, not a bare EOF.
	_, err := Open(strings.NewReader(doc[:len(doc)-40]+"\n"), Options{TempDir: t.TempDir()})
	var fe *gdv.FormatError
	if !errors.As(err, &fe) || fe.Code != "not_bipro" {
		t.Errorf("truncated: %v, want not_bipro", err)
	}
	_, err = Open(strings.NewReader(doc[:strings.LastIndex(doc, "</soapenv:Body>")]+"\n"), Options{TempDir: t.TempDir()})
	if !errors.As(err, &fe) || fe.Code != "not_bipro" || !strings.Contains(fe.Detail, "EOF") {
		t.Errorf("without its last end tags: %v, want not_bipro naming the early end", err)
	}
}

// zipDocument is a BiPRO shipment with one ZIP document holding entries; an entry named in
// spaces gets that many spaces after its content, written in pieces (the bomb's 200 MB are
// never held in memory).
func zipDocument(t *testing.T, entries map[string][]byte, spaces map[string]int) []byte {
	t.Helper()
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	chunk := bytes.Repeat([]byte(" "), 64<<10)
	for name, content := range entries {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(content); err != nil {
			t.Fatal(err)
		}
		for n := spaces[name]; n > 0; n -= len(chunk) {
			if _, err := w.Write(chunk[:min(n, len(chunk))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(envelope(document("bestand.zip", "application/zip", base64.StdEncoding.EncodeToString(zb.Bytes()))))
}

// readErr opens in and reads its portfolio to the end, returning the first error.
func readErr(t *testing.T, in []byte, opt Options) error {
	t.Helper()
	opt.TempDir = t.TempDir()
	sh, err := Open(bytes.NewReader(in), opt)
	if err != nil {
		return err
	}
	defer sh.Close()
	_, err = gdv.Collect(sh.Reader(gdv.Options{}))
	return err
}

// TestShipment_ZipLimits: a ZIP entry that expands more than MaxRatio times (a ZIP bomb built
// here: a GDV head and 200 MB of spaces, 200 KB deflated) is refused before it is
// decompressed, and so are entries that together pass MaxUnzipped; a generated GDV file (15
// times) and a small entry of any ratio are read. Bug (issue 20, item 7): entries had no cap, a
// 1.28 MB shipment expanded to 180 MB.
func TestShipment_ZipLimits(t *testing.T) {
	t.Parallel()
	code := func(err error) string {
		var fe *gdv.FormatError
		if errors.As(err, &fe) {
			return fe.Code
		}
		if err != nil {
			return err.Error()
		}
		return ""
	}
	gdvHead := []byte("0001")
	err := readErr(t, zipDocument(t, map[string][]byte{"GDV/bombe.gdv": gdvHead}, map[string]int{"GDV/bombe.gdv": 200 << 20}), Options{})
	if code(err) != "zip_ratio" || !strings.Contains(err.Error(), "bestand.zip/GDV/bombe.gdv") {
		t.Errorf("bomb: %v, want zip_ratio naming the entry", err)
	}

	plain := gdvFile(t, 400, 2) // about 740 KB, deflated about 15 times
	two := map[string][]byte{"a.gdv": plain, "b.gdv": plain}
	if err := readErr(t, zipDocument(t, two, nil), Options{MaxUnzipped: int64(len(plain)) * 3 / 2}); code(err) != "too_large" {
		t.Errorf("two entries past MaxUnzipped: %v, want too_large", err)
	}
	if err := readErr(t, zipDocument(t, two, nil), Options{MaxUnzipped: int64(len(plain)) * 2}); err != nil {
		t.Errorf("two entries within MaxUnzipped: %v", err)
	}
	if err := readErr(t, zipDocument(t, map[string][]byte{"a.gdv": plain}, nil), Options{MaxRatio: 10}); code(err) != "zip_ratio" {
		t.Errorf("generated file with MaxRatio 10: %v, want zip_ratio", err)
	}
	// At most RatioGrace bytes, any ratio: read (its content is the reader's business).
	err = readErr(t, zipDocument(t, map[string][]byte{"a.gdv": plain, "klein.gdv": gdvHead}, map[string]int{"klein.gdv": RatioGrace - 4}), Options{})
	if c := code(err); c == "zip_ratio" || c == "too_large" {
		t.Errorf("small entry refused: %v", err)
	}
}
