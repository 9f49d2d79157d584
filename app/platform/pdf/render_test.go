package pdf_test

import (
	"bytes"
	"errors"
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
)

var meta = pdf.Meta{Title: "Maklervertrag", Author: "BrokerDesk", CreatedAt: time.Date(2026, 12, 8, 10, 0, 0, 0, time.UTC)}

const umlauts = "Müller Straße ÄÖÜ äöü ß €"

// Catches: a font without Unicode mapping (pdftotext gives back mojibake or nothing), a font
// not embedded (pdffonts emb=no), umlauts lost in the UTF-16 encoding, and output pdfcpu's
// strict validation refuses.
func TestRender_UnicodeTextFontsValid(t *testing.T) {
	r := mustRender(t, "# Maklervertrag {{name}}\n\n## Parteien\nZwischen {{name}} und uns.\n- erster Punkt\n---\n", map[string]string{"name": umlauts})
	mustValidate(t, r.PDF)
	pdftest.AssertFontsEmbedded(t, r.PDF)
	got := pdftest.Text(t, r.PDF)
	for _, want := range []string{"Maklervertrag " + umlauts, "Parteien", "Zwischen " + umlauts + " und uns.", "erster Punkt", "Seite 1 von 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("pdftotext lacks %q:\n%s", want, got)
		}
	}
	if r.Pages != 1 {
		t.Errorf("pages = %d, want 1", r.Pages)
	}
	if info := pdftest.Must(t, "pdfinfo", r.PDF); !strings.Contains(info, "Maklervertrag") {
		t.Errorf("pdfinfo shows no title:\n%s", info)
	}
}

// Catches: a creation date read from the clock, an unsorted catalog or map-ordered font
// subset (the same input giving different bytes, so the idempotent generate endpoint and
// document hashes would differ), and a CreatedAt that is ignored.
func TestRender_Deterministic(t *testing.T) {
	body := "# Vertrag\n{{a}} {{b}}\n{{signature:contact}}\n" + strings.Repeat("Zeile mit Text äöü €\n", 80)
	vals := map[string]string{"a": umlauts, "b": "Ωμέγα Жж"}
	first := mustRender(t, body, vals)
	for range 5 {
		if again := mustRender(t, body, vals); !bytes.Equal(first.PDF, again.PDF) {
			t.Fatal("same input and meta gave different bytes")
		}
	}
	m := meta
	m.CreatedAt = m.CreatedAt.Add(time.Hour)
	other, err := pdf.Render(body, vals, m)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first.PDF, other.PDF) {
		t.Error("another CreatedAt gave the same bytes: the date is not written")
	}
}

// Catches: values substituted before the markup is read (a value "# x" becoming a heading,
// "[[pagebreak]]" a page break, "{{signature:contact}}" a signature field) or scanned for
// placeholders again (a contact named {{company.iban}} leaking the company's IBAN).
func TestRender_ValuesAreLiteral(t *testing.T) {
	vals := map[string]string{
		"contact.name": "{{company.iban}}", "company.iban": "DE89370400440532013000",
		"h": "# x", "p": "[[pagebreak]]", "s": "{{signature:contact}}", "multi": "Zeile eins\nZeile zwei\r\nZeile drei",
	}
	r := mustRender(t, "Name: {{contact.name}}\n{{h}}\n{{p}}\n{{s}}\n- {{multi}}", vals)
	if r.Pages != 1 || len(r.Fields) != 0 {
		t.Errorf("pages %d, fields %v: a value was read as markup", r.Pages, r.Fields)
	}
	// -raw: the content stream order; pdftotext's layout mode drops the spaces around "#".
	got := pdftest.Must(t, "pdftotext", r.PDF, "-raw")
	for _, want := range []string{"Name: {{company.iban}}", "# x", "[[pagebreak]]", "{{signature:contact}}", "Zeile eins\n", "Zeile zwei\n", "Zeile drei"} {
		if !strings.Contains(got, want) {
			t.Errorf("pdftotext lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "DE89") {
		t.Error("a value was scanned for placeholders again")
	}
}

// Catches: a missing value printed as empty text (a contract without the customer's name),
// names reported unsorted or twice, and an error type doctemplates cannot map to 422.
func TestRender_Unfilled(t *testing.T) {
	_, err := pdf.Render("{{z}} {{a}} {{ z }} {{given}}\n{{signature:broker}}", map[string]string{"given": ""}, meta)
	var ue *pdf.UnfilledError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want *UnfilledError", err)
	}
	if !reflect.DeepEqual(ue.Names, []string{"a", "z"}) {
		t.Errorf("names = %v, want [a z]", ue.Names)
	}
}

// Catches: typos in placeholder names printed literally into every document, and a signature
// field in running text whose box would have nowhere to go.
func TestRender_MarkupErrors(t *testing.T) {
	for _, body := range []string{
		"Hallo {{contact name}}", "{{}}", "{{a-b}}", "Unterschrift: {{signature:contact}}",
		"- {{signature:contact}}", "{{signature:Kunde}}", "{{signature:}}", "{{signature:contact}} {{x}}",
	} {
		_, err := pdf.Render(body, map[string]string{"x": "1"}, meta)
		var me *pdf.MarkupError
		if !errors.As(err, &me) || me.Line != 1 {
			t.Errorf("%q: err = %v, want *MarkupError on line 1", body, err)
		}
		if pdf.Check(body) == nil {
			t.Errorf("Check(%q) = nil", body)
		}
	}
	// An opening without a closing is text.
	r := mustRender(t, "Preis {{ in Euro", nil)
	if got := pdftest.Text(t, r.PDF); !strings.Contains(got, "Preis {{ in Euro") {
		t.Errorf("text = %q", got)
	}
}

// Catches: signature fields listed as placeholders (doctemplates would ask for a value
// "signature:contact"), repeats, wrong order of roles.
func TestPlaceholdersAndRoles(t *testing.T) {
	body := "{{ contact.name }} {{b}}\n{{signature:broker}}\n{{contact.name}} {{a.x_1}}\n{{signature:contact}}\n{{signature:broker}}\n{{bad name}}"
	if got := pdf.Placeholders(body); !reflect.DeepEqual(got, []string{"a.x_1", "b", "contact.name"}) {
		t.Errorf("Placeholders = %v", got)
	}
	if got := pdf.SignatureRoles(body); !reflect.DeepEqual(got, []string{"broker", "contact"}) {
		t.Errorf("SignatureRoles = %v", got)
	}
	if got := pdf.Placeholders("kein Platzhalter"); len(got) != 0 {
		t.Errorf("Placeholders = %v", got)
	}
}

// Catches: fields in the wrong unit or origin (bottom-left, points), a field outside the page,
// a field on the wrong page after a page break, a box split over a page end, and a caption
// missing under the line.
func TestRender_SignatureFields(t *testing.T) {
	body := "# Vollmacht\nText\n{{signature:contact}}\n[[pagebreak]]\nSeite zwei\n{{signature:broker}}\n" +
		strings.Repeat("Füllzeile\n", 42) + "{{signature:zeuge}}"
	r := mustRender(t, body, nil)
	if len(r.Fields) != 3 {
		t.Fatalf("fields = %v", r.Fields)
	}
	wantPages := []int{1, 2, 3}
	for i, f := range r.Fields {
		if f.Page != wantPages[i] {
			t.Errorf("field %d (%s) on page %d, want %d", i, f.Role, f.Page, wantPages[i])
		}
		if f.X <= 0 || f.Y <= 0 || f.X+f.Width >= 1 || f.Y+f.Height >= 1 {
			t.Errorf("field %d outside the page: %+v", i, f)
		}
		// About 70 x 22 mm on A4.
		if w, h := f.Width*210, f.Height*297; w < 60 || w > 80 || h < 18 || h > 26 {
			t.Errorf("field %d is %.1f x %.1f mm", i, w, h)
		}
		// Above the footer: the box never runs into the last 25 mm.
		if f.Y+f.Height > (297.0-25)/297 {
			t.Errorf("field %d runs into the footer: %+v", i, f)
		}
	}
	if r.Fields[0].Role != "contact" || r.Fields[1].Role != "broker" || r.Fields[2].Role != "zeuge" {
		t.Errorf("roles = %v", r.Fields)
	}
	// The first field sits below the heading and the text line, near the top (origin top).
	if y := r.Fields[0].Y * 297; y < 30 || y > 60 {
		t.Errorf("first field at %.1f mm from the top", y)
	}
	if r.Pages != 3 {
		t.Errorf("pages = %d, want 3", r.Pages)
	}
	p1, p2, p3 := pageText(t, r.PDF, 1), pageText(t, r.PDF, 2), pageText(t, r.PDF, 3)
	if !strings.Contains(p1, "Unterschrift Kunde/Kundin") || !strings.Contains(p1, "Seite 1 von 3") {
		t.Errorf("page 1: %q", p1)
	}
	if !strings.Contains(p2, "Unterschrift Makler/in") || !strings.Contains(p2, "Seite zwei") {
		t.Errorf("page 2: %q", p2)
	}
	if !strings.Contains(p3, "Unterschrift zeuge") || strings.Contains(p2, "zeuge") || !strings.Contains(p3, "Seite 3 von 3") {
		t.Errorf("the box that did not fit on page 2 is not whole on page 3: p2 %q p3 %q", p2, p3)
	}
}

// Catches: text running off the page (a long value without spaces, many lines), a lost
// line at a page break and an empty body producing no page.
func TestRender_WrapsAndBreaks(t *testing.T) {
	long := strings.Repeat("x", 400)
	var b strings.Builder
	for i := range 150 {
		b.WriteString("Absatz Nummer ")
		b.WriteString(strings.Repeat("I", i%7+1))
		b.WriteString(" mit etwas Text, der umbrechen muss, weil er lang genug ist, um über die Seitenbreite zu gehen.\n")
	}
	r := mustRender(t, "{{long}}\n"+b.String()+"ENDE", map[string]string{"long": long})
	if r.Pages < 4 {
		t.Errorf("pages = %d", r.Pages)
	}
	mustValidate(t, r.PDF)
	got := pdftest.Text(t, r.PDF)
	if strings.Count(got, "Absatz Nummer") != 150 || !strings.Contains(got, "ENDE") || strings.Count(got, "x") < 400 {
		t.Errorf("text lost at wrapping or page breaks")
	}
	empty := mustRender(t, "", nil)
	if empty.Pages != 1 {
		t.Errorf("empty body: %d pages", empty.Pages)
	}
	mustValidate(t, empty.PDF)
}

// Catches: runes the font has no glyph for (emoji, CJK) breaking the UTF-16 text (surrogate
// pairs as CIDs) or the PDF; control characters in values breaking the text operators.
func TestRender_UnsupportedRunes(t *testing.T) {
	r := mustRender(t, "{{v}}", map[string]string{"v": "Gruß 😀 漢字 a\x00b\tc\x1b"})
	mustValidate(t, r.PDF)
	got := pdftest.Text(t, r.PDF)
	if !strings.Contains(got, "Gruß ? ?? a b c") {
		t.Errorf("text = %q", got)
	}
}
