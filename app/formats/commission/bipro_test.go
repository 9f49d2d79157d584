package commission

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"
)

// TestBiPRO_Abrechnung reads the sample: prefixes and namespaces ignored, Soll/Haben applied
// to the amount, nested Betrag with its Waehrung, xs:date with zone and dateTime, the period
// and insurer of the header, and the bad bookings as issues (a reader that dropped the sign
// of "S" would add 412.50 instead of subtracting it: the total catches it).
func TestBiPRO_Abrechnung(t *testing.T) {
	in, err := os.ReadFile("testdata/abrechnung.xml")
	if err != nil {
		t.Fatal(err)
	}
	es, sum, err := readAll(t, FormatBiPRO, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"16|LV-12 345|commission|Abschlussprovision|1234.56|2025-01-15",
		"24|0012345|cancellation|Storno Abschlussprovision|-412.50|2025-01-20",
		"31|KV 3|correction|Korrektur|-0.01|2025-01-21",
		"51|KV 6|commission|Bestandsprovision|99.99|2025-01-31",
	}, "\n")
	if got := briefs(es); got != want {
		t.Errorf("entries\n%s\nwant\n%s", got, want)
	}
	if got := total(es).String(); got != "922.04" {
		t.Errorf("total %s", got)
	}
	if es[0].Description != "AP Leben, Müller" {
		t.Errorf("description %q", es[0].Description)
	}
	if got, want := issueList(sum.Issues), "37:error:amount_invalid 42:error:date_invalid 47:error:policy_number_missing"; got != want {
		t.Errorf("issues %s, want %s", got, want)
	}
	if sum.VUNumber != "9001" || sum.PeriodFrom == nil || sum.PeriodFrom.Format(time.DateOnly) != "2025-01-01" || sum.PeriodTo == nil || sum.PeriodTo.Format(time.DateOnly) != "2025-01-31" {
		t.Errorf("summary %+v", sum)
	}
}

// TestBiPRO_Variants: a Latin-1 declaration, Vorzeichen as an attribute, a non-EUR amount,
// an unknown Soll/Haben marker and a conflicting sign.
func TestBiPRO_Variants(t *testing.T) {
	doc := `<?xml version="1.0" encoding="ISO-8859-1"?>
<Abrechnung><Buchung><VSNR>Ä1</VSNR><Betrag Vorzeichen="-">5.00</Betrag><Buchungsdatum>01.02.2025</Buchungsdatum></Buchung>
<Buchung><VSNR>A2</VSNR><Betrag Waehrung="CHF">5.00</Betrag><Buchungsdatum>2025-02-01</Buchungsdatum></Buchung>
<Buchung><VSNR>A3</VSNR><Betrag>5.00</Betrag><SollHaben>X</SollHaben><Buchungsdatum>2025-02-01</Buchungsdatum></Buchung>
<Buchung><VSNR>A4</VSNR><Betrag>-5.00</Betrag><SollHaben>H</SollHaben><Buchungsdatum>2025-02-01</Buchungsdatum></Buchung>
</Abrechnung>`
	in, _ := charmap.ISO8859_1.NewEncoder().Bytes([]byte(doc))
	es, sum, err := readAll(t, FormatBiPRO, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := briefs(es); got != "2|Ä1|cancellation||-5.00|2025-02-01\n5|A4|cancellation||-5.00|2025-02-01" {
		t.Errorf("entries %s", got)
	}
	if got := issueList(sum.Issues); got != "3:error:currency_not_eur 4:error:amount_invalid 5:warning:sign_conflict" {
		t.Errorf("issues %s", got)
	}
}

// TestBiPRO_Unreadable: not XML, XML that is no Abrechnung, broken XML, the limits.
func TestBiPRO_Unreadable(t *testing.T) {
	csvIn, _ := os.ReadFile("testdata/statement.csv")
	deep := strings.Repeat("<a>", biproMaxDepth+1) + strings.Repeat("</a>", biproMaxDepth+1)
	for name, in := range map[string]string{
		"empty":     "",
		"csv":       string(csvIn),
		"gdv":       "0001" + strings.Repeat(" ", 252),
		"other xml": `<?xml version="1.0"?><Vertrag><VSNR>1</VSNR></Vertrag>`,
		"broken":    `<Abrechnung><Buchung></Abrechnung>`,
		"cut":       `<Abrechnung><Buchung><VSNR>1</VSNR>`,
		"deep":      "<Abrechnung>" + deep + "</Abrechnung>",
		"big text":  "<Abrechnung><Text>" + strings.Repeat("x", 3<<20) + "</Text></Abrechnung>",
		"encoding":  `<?xml version="1.0" encoding="EBCDIC"?><Abrechnung/>`,
	} {
		if _, _, err := readAll(t, FormatBiPRO, []byte(in), Options{}); !errors.Is(err, ErrUnreadable) {
			t.Errorf("%s: %v, want ErrUnreadable", name, err)
		}
	}
	_, sum, err := readAll(t, FormatBiPRO, []byte(`<Abrechnung/>`), Options{})
	if err != nil || issueList(sum.Issues) != "0:warning:no_commission_records" {
		t.Errorf("empty Abrechnung: %v %s", err, issueList(sum.Issues))
	}
}

// TestBiPRO_Many streams 20,000 bookings.
func TestBiPRO_Many(t *testing.T) {
	var b strings.Builder
	b.WriteString("<Abrechnung>")
	for i := range 20000 {
		fmt.Fprintf(&b, "<Buchung><VSNR>V%d</VSNR><Betrag>%d.%02d</Betrag><Buchungsdatum>2025-01-01</Buchungsdatum></Buchung>", i, i%7, i%100)
	}
	b.WriteString("</Abrechnung>")
	es, sum, err := readAll(t, FormatBiPRO, []byte(b.String()), Options{})
	if err != nil || len(es) != 20000 || len(sum.Issues) != 0 {
		t.Fatalf("%v %d %s", err, len(es), issueList(sum.Issues))
	}
}
