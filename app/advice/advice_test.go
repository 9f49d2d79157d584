package advice

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/advicerecord"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

func fieldCodes(err error) []string {
	inv, ok := err.(*errs.Invalid)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range inv.Errors {
		out = append(out, e.Field+":"+e.Code)
	}
	return out
}

// TestInput_Validate: every bad field of an AdviceRecordInput is listed at once. Catches a
// check that stops at the first problem, a product's field named without its index, a premium
// read as a float (or with three decimals), a missing subject or consultedAt accepted.
func TestInput_Validate(t *testing.T) {
	good := func() Input {
		return Input{ContactID: ptr.To(uuid.NewString()), ConsultedAt: ptr.To("2026-12-01T10:00:00+01:00"),
			Subject: ptr.To("Hausrat"), Products: []ProductInput{{Insurer: ptr.To("Alpha"), Product: ptr.To("Top"),
				ContractType: ptr.To("130"), Premium: ptr.To("12.34")}}}
	}
	for _, tc := range []struct {
		name string
		edit func(*Input)
		want string
	}{
		{"valid", func(*Input) {}, ""},
		{"nothing", func(in *Input) { *in = Input{} }, "contactId:required consultedAt:required subject:required"},
		{"bad ids and time", func(in *Input) {
			in.ContactID, in.ContractID, in.AdvisorID, in.ConsultedAt = ptr.To("x"), ptr.To("y"), ptr.To("z"), ptr.To("gestern")
		}, "contactId:invalid_uuid contractId:invalid_uuid advisorId:invalid_uuid consultedAt:invalid_datetime"},
		{"local time is Berlin", func(in *Input) { in.ConsultedAt = ptr.To("2026-12-01T10:00") }, ""},
		{"blank subject, bad channel", func(in *Input) { in.Subject, in.Channel = ptr.To("  "), ptr.To("fax") },
			"channel:invalid_enum subject:required"},
		{"too long", func(in *Input) {
			in.Subject, in.Reasons, in.Notes = ptr.To(strings.Repeat("ä", MaxSubject+1)), ptr.To(strings.Repeat("x", MaxText+1)), ptr.To("a\x00b")
		}, "subject:too_long reasons:too_long notes:invalid_character"},
		{"bounds are inclusive", func(in *Input) {
			in.Subject, in.Advice = ptr.To(strings.Repeat("ß", MaxSubject)), ptr.To(strings.Repeat("ü", MaxText))
		}, ""},
		{"bad products", func(in *Input) {
			in.Products = []ProductInput{{}, {Insurer: ptr.To("A"), Product: ptr.To("B"), ContractType: ptr.To("999"), Premium: ptr.To("1.234")},
				{Insurer: ptr.To("A"), Product: ptr.To("B"), Premium: ptr.To("-1.00")}, {Insurer: ptr.To("A"), Product: ptr.To("B"), Premium: ptr.To("1e3")}}
		}, "products.0.insurer:required products.0.product:required products.1.contractType:unknown_type products.1.premium:invalid_decimal " +
			"products.2.premium:negative products.3.premium:invalid_decimal"},
		{"too many products", func(in *Input) {
			in.Products = make([]ProductInput, MaxProducts+1)
		}, "products:too_long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := good()
			tc.edit(&in)
			got := strings.Join(fieldCodes(in.Validate()), " ")
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestInputOf_RoundTrip: the Input of a stored record reads back as the same record. Catches
// a PATCH that, merging into inputOf, changes fields it does not name (a premium, a flag, the
// channel, consultedAt's instant).
func TestInputOf_RoundTrip(t *testing.T) {
	m := schematype.MustMoney("1234.50")
	contract, advisor := uuid.New(), uuid.New()
	a := &ent.AdviceRecord{ID: uuid.New(), ContactID: uuid.New(), ContractID: &contract, AdvisorID: &advisor,
		ConsultedAt: time.Date(2026, 12, 1, 9, 30, 0, 123456000, time.UTC), Channel: advicerecord.ChannelVideo,
		Subject: "Altersvorsorge", CustomerWishes: "Rente", Advice: "Riester", AdviceWaived: true,
		Products: []schematype.AdviceProduct{{Insurer: "Alpha", Product: "Rente plus", ContractType: "010", Premium: &m, Recommended: true},
			{Insurer: "Beta", Product: "Basis", Chosen: true}}}
	in := inputOf(a)
	if err := in.Validate(); err != nil {
		t.Fatalf("inputOf does not validate: %v", err)
	}
	want := record{contactID: a.ContactID, contractID: &contract, advisorID: &advisor, consultedAt: a.ConsultedAt, channel: "video",
		subject: "Altersvorsorge", wishes: "Rente", advice: "Riester", waived: true, products: a.Products}
	if got := recordOf(in); !same(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	changed := recordOf(in)
	changed.products = append([]schematype.AdviceProduct{}, changed.products...)
	changed.products[1].Chosen = false
	if same(changed, want) {
		t.Error("same ignores a product's flag")
	}
}

// TestProtocolValues: the placeholders of the protocol. Catches a time in UTC instead of
// Berlin, an English channel, a premium with a decimal point instead of a comma, a product line
// without its flags, a missing placeholder the default template uses.
func TestProtocolValues(t *testing.T) {
	m := schematype.MustMoney("1234.5")
	small := schematype.MustMoney("12.34")
	a := &ent.AdviceRecord{ConsultedAt: time.Date(2026, 7, 1, 8, 5, 0, 0, time.UTC), Channel: advicerecord.ChannelPhone,
		Subject: "Wohngebäude", Products: []schematype.AdviceProduct{
			{Insurer: "Württembergische", Product: "Wohngebäude Premium", ContractType: "140", Premium: &m, Recommended: true, Chosen: true},
			{Insurer: "Beta", Product: "Basis", Premium: &small},
			{Insurer: "Gamma", Product: "Ohne", ContractType: "ZZZ"}}}
	v := protocolValues(a, "Anna Beraterin")
	want := map[string]string{
		"advice.subject":     "Wohngebäude",
		"advice.consultedAt": "01.07.2026 10:05", // summer time: UTC+2
		"advice.channel":     "Telefon",
		"advice.products": "Württembergische – Wohngebäude Premium (Verbundene Wohngebäudeversicherung), Beitrag 1.234,50 €, empfohlen, gewählt\n" +
			"Beta – Basis, Beitrag 12,34 €\nGamma – Ohne (ZZZ)",
		"advice.waived": "Nein",
		"advisor.name":  "Anna Beraterin",
	}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %q, want %q", k, v[k], w)
		}
	}
	for _, k := range []string{"advice.customerWishes", "advice.customerNeeds", "advice.advice", "advice.reasons", "advice.notes"} {
		if _, ok := v[k]; !ok {
			t.Errorf("%s missing", k)
		}
	}
	if got := protocolFilename(a); got != "Beratungsprotokoll 01.07.2026.pdf" {
		t.Errorf("filename %q", got)
	}
	for in, want := range map[string]string{"0": "0,00 €", "999.99": "999,99 €", "1000": "1.000,00 €", "-1234567.8": "-1.234.567,80 €"} {
		if got := schematype.MustMoney(in).German(); got != want {
			t.Errorf("German(%s) = %q, want %q", in, got, want)
		}
	}
}
