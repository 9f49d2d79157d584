package documents

import (
	"archive/zip"
	"bytes"
	"testing"
)

func zipOf(t *testing.T, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, n := range names {
		f, err := w.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write([]byte("<x/>"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSniff_Allowed: the stored type comes from the bytes; office files are told from plain
// archives, and active or executable content is refused whatever its name would say.
func TestSniff_Allowed(t *testing.T) {
	exe := make([]byte, 256)
	copy(exe, "MZ\x90\x00")
	copy(exe[0x3c:], []byte{0x80, 0, 0, 0})
	copy(exe[0x80:], "PE\x00\x00")
	for _, c := range []struct {
		name    string
		content []byte
		allowed bool
	}{
		{"pdf", []byte("%PDF-1.7\n%%EOF\n"), true},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"), true},
		{"text", []byte("Sehr geehrte Frau Müller,\n"), true},
		{"docx", zipOf(t, "[Content_Types].xml", "word/document.xml"), true},
		{"xlsx", zipOf(t, "[Content_Types].xml", "xl/workbook.xml"), true},
		{"plain zip", zipOf(t, "a.txt"), false},
		{"windows executable", exe, false},
		{"ELF executable", append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 60)...), false},
		{"html", []byte("<!DOCTYPE html><html><body>x</body></html>"), false},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), false},
		{"shell script", []byte("#!/bin/sh\nrm -rf /\n"), false},
		{"unknown bytes", []byte{0x00, 0x01, 0x02, 0x03, 0xfe, 0xff}, false},
	} {
		if got := Allowed(Sniff(c.content)); got != c.allowed {
			t.Errorf("%s (%s): allowed %v, want %v", c.name, Sniff(c.content), got, c.allowed)
		}
	}
}
