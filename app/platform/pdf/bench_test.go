package pdf_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
)

// contract is a three-page broker contract, the benchmark document.
func contract() (string, map[string]string) {
	var b strings.Builder
	b.WriteString("# Maklervertrag\n\nzwischen\n{{contact.name}}\n{{contact.street}}\n{{contact.city}}\n- im Folgenden Kunde/Kundin -\n\nund\n{{company.name}}\n{{company.street}}\n{{company.city}}\n- im Folgenden Makler/in -\n---\n")
	for i := 1; i <= 11; i++ {
		b.WriteString("## § " + strings.Repeat("I", i%4+1) + " Gegenstand des Vertrags\n")
		b.WriteString("Der Kunde/die Kundin beauftragt {{company.name}} mit der Vermittlung und Betreuung von Versicherungsverträgen. " +
			"Der Makler/die Maklerin prüft den bestehenden Versicherungsschutz, ermittelt den Bedarf und empfiehlt geeignete Tarife " +
			"nach objektiver, ausgewogener Marktuntersuchung gemäß § 60 VVG. Vergütet wird die Tätigkeit durch Courtagen der Versicherer.\n")
		b.WriteString("- Vertragsnummer {{contract.number}}, Beitrag {{contract.premium}} € jährlich\n- Ansprechpartner: {{user.name}}, {{user.email}}\n\n")
	}
	b.WriteString("\nOrt, Datum: {{company.city}}, {{today}}\n{{signature:contact}}\n{{signature:broker}}\n")
	return b.String(), map[string]string{
		"contact.name": "Jürgen Müller-Lüdenscheidt", "contact.street": "Königstraße 12", "contact.city": "70173 Stuttgart",
		"company.name": "Maßgeschneidert Versicherungsmakler GmbH", "company.street": "Äußere Weißenburger Str. 3",
		"company.city": "81667 München", "contract.number": "KV-2026-000123", "contract.premium": "1.234,56",
		"user.name": "Özlem Şahin", "user.email": "oezlem@example.org", "today": "08.12.2026",
	}
}

// Catches: the benchmark document drifting from three pages (its numbers would no longer
// say what the docs claim).
func TestContractIsThreePages(t *testing.T) {
	body, vals := contract()
	r := mustRender(t, body, vals)
	if r.Pages != 3 || len(r.Fields) != 2 {
		t.Fatalf("pages %d, fields %d; the benchmark wants a 3-page contract with 2 fields", r.Pages, len(r.Fields))
	}
	mustValidate(t, r.PDF)
}

// BenchmarkRender3Pages renders the three-page broker contract (fonts parsed and subset per
// render, as in the server).
func BenchmarkRender3Pages(b *testing.B) {
	body, vals := contract()
	var size int
	for b.Loop() {
		r, err := pdf.Render(body, vals, meta)
		if err != nil {
			b.Fatal(err)
		}
		size = len(r.PDF)
	}
	b.ReportMetric(float64(size), "pdf-bytes")
}

// FuzzRender: no template body and no value makes Render panic; every failure is one of the
// two documented errors; every success is a PDF with at least one page and fields on pages it
// has.
func FuzzRender(f *testing.F) {
	body, _ := contract()
	for _, s := range []string{body, "", "{{", "}}{{a}}", "# {{a}}\n- {{a}}\n---\n[[pagebreak]]\n{{signature:contact}}", "{{signature:x}} a", "\x00\xff{{ a }}"} {
		f.Add(s, "Wert\nmit Zeile ÄÖÜ 😀 {{a}}")
	}
	f.Fuzz(func(t *testing.T, body, value string) {
		vals := map[string]string{}
		for _, n := range pdf.Placeholders(body) {
			vals[n] = value
		}
		r, err := pdf.Render(body, vals, meta)
		if err != nil {
			var me *pdf.MarkupError
			if !errors.As(err, &me) {
				t.Fatalf("err = %v, want *MarkupError (all placeholders have values)", err)
			}
			return
		}
		if len(r.PDF) == 0 || r.Pages < 1 {
			t.Fatalf("pages %d, %d bytes", r.Pages, len(r.PDF))
		}
		for _, fl := range r.Fields {
			if fl.Page < 1 || fl.Page > r.Pages {
				t.Fatalf("field on page %d of %d", fl.Page, r.Pages)
			}
		}
	})
}
