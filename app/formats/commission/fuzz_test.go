package commission

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// FuzzRead feeds odd input to every format: a panic, an error that is neither ErrUnreadable
// nor nil, or an entry without its required values fails.
func FuzzRead(f *testing.F) {
	for _, p := range []string{"testdata/statement.csv", "testdata/abrechnung.xml"} {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(inkasso(f, "LV-1", "40", "15012025", 123)))
	f.Add([]byte("0400\r\r\n\xff\xfe"))
	f.Add([]byte("sep=\t\n\"a\tb"))
	f.Add([]byte("<Buchung><Betrag Vorzeichen=\"-\">1e9</Betrag>"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, format := range []string{FormatCSV, FormatGDV, FormatBiPRO} {
			_, err := Read(format, bytes.NewReader(in), Options{MaxIssues: 5}, func(e Entry) error {
				if e.PolicyNumber == "" || e.BookedOn.IsZero() || e.Type == "" {
					t.Errorf("%s: entry without its values: %+v", format, e)
				}
				return nil
			})
			if err != nil && !strings.Contains(err.Error(), ErrUnreadable.Error()) {
				t.Errorf("%s: %v", format, err)
			}
		}
	})
}

// TestRead_UnknownFormat: a format name the spec does not have is unreadable, not a panic.
func TestRead_UnknownFormat(t *testing.T) {
	if _, err := Read("gdv_vu_vermittler", strings.NewReader(""), Options{}, func(Entry) error { return nil }); err == nil {
		t.Error("no error")
	}
}
