package extractions

import (
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// The rules read German insurer documents (Versicherungsschein, Nachtrag, Beitragsrechnung):
// each is a regular expression on a label and where its value stands (same line after the
// label, or the next non-empty line), named, with a fixed confidence per way it matched.
// docs/decisions/extraction.md lists them with what each accepts.

// Field keys an extraction yields: the ContractInput names a contract takes, plus the holder
// (the Versicherungsnehmer, evidence for the broker: a contract's contact is not written from a
// document).
const (
	KeyInsurer          = "insurerId"
	KeyPolicyNumber     = "policyNumber"
	KeyType             = "type"
	KeyStartDate        = "startDate"
	KeyEndDate          = "endDate"
	KeyPremium          = "premium"
	KeyPaymentFrequency = "paymentFrequency"
	KeyHolder           = "holder.name"
)

// Confidences: the same line is surer than the next one; a keyword in the title surer than one
// in the text.
const (
	confSameLine = 0.95
	confNextLine = 0.75
	confTitle    = 0.9
	confBody     = 0.6
)

// InsurerName is a catalog insurer the insurer rule looks for.
type InsurerName struct {
	ID   uuid.UUID
	Name string
}

// page is one page's lines (1-based number).
type page struct {
	no    int
	lines []string
}

func splitPages(pages []string) []page {
	out := make([]page, len(pages))
	for i, p := range pages {
		var ls []string
		for _, l := range strings.Split(p, "\n") {
			if l = strings.Join(strings.Fields(l), " "); l != "" {
				ls = append(ls, l)
			}
		}
		out[i] = page{no: i + 1, lines: ls}
	}
	return out
}

// labelled finds the first line matching label: the value is what follows the label on that
// line when value matches it there, else the next non-empty line (label proximity).
func labelled(pages []page, key, rule string, label, value *regexp.Regexp, norm func(string) (any, bool)) *schematype.ExtractedField {
	for _, p := range pages {
		for i, l := range p.lines {
			loc := label.FindStringIndex(l)
			if loc == nil {
				continue
			}
			if m := value.FindStringSubmatch(l[loc[1]:]); m != nil {
				if v, ok := norm(m[1]); ok {
					return &schematype.ExtractedField{Key: key, Value: v, Confidence: confSameLine, Page: p.no,
						Evidence: evidence(l), Rule: rule}
				}
			}
			if i+1 < len(p.lines) {
				if m := value.FindStringSubmatch(p.lines[i+1]); m != nil && value.FindStringIndex(p.lines[i+1])[0] == 0 {
					if v, ok := norm(m[1]); ok {
						return &schematype.ExtractedField{Key: key, Value: v, Confidence: confNextLine, Page: p.no,
							Evidence: evidence(l + " / " + p.lines[i+1]), Rule: rule + ".next_line"}
					}
				}
			}
		}
	}
	return nil
}

// evidence is a line as stored: at most 200 characters.
func evidence(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200])
	}
	return s
}

var (
	rePolicyLabel = regexp.MustCompile(`(?i)(versicherungsschein|vertrags|policen|versicherungs)[- ]?(nr\.?|nummer)\b\.?`)
	rePolicyValue = regexp.MustCompile(`^\s*[:.]?\s*([A-Z0-9][A-Z0-9./-]*(?: [0-9][A-Z0-9./-]*)?)`)
	reDate        = `(\d{1,2})\.\s?(\d{1,2})\.\s?(\d{4})`
	reDateValue   = regexp.MustCompile(`^\s*[:.]?\s*(?:ab |am |zum |vom )?(` + reDate + `)`)
	reStartLabel  = regexp.MustCompile(`(?i)(versicherungsbeginn|vertragsbeginn|beginn der versicherung|^beginn)\b`)
	reEndLabel    = regexp.MustCompile(`(?i)(vertragsende|versicherungsende|vertragsablauf|ablauf(datum)?|endet am)\b`)
	rePeriod      = regexp.MustCompile(`(?i)(versicherungsdauer|vertragsdauer|laufzeit)\b.*?vom\s+` + reDate + `\s+bis\s+(?:zum\s+)?` + reDate)
	reHolderLabel = regexp.MustCompile(`(?i)^versicherungsnehmer(in)?\b`)
	reHolderValue = regexp.MustCompile(`^\s*[:]?\s*((?:Herr|Frau|Firma)?\s*[\p{L}][\p{L}.' -]+[\p{L}.])`)
	reMoney       = regexp.MustCompile(`(\d{1,3}(?:\.\d{3})*,\d{2}|\d+,\d{2})\s*(?:EUR|€|Euro)?`)
	rePremiumLbl  = regexp.MustCompile(`(?i)\b(gesamtbeitrag|zahlbeitrag|jahresbeitrag|monatsbeitrag|beitrag|prämie|praemie)\b`)
	reFrequency   = regexp.MustCompile(`(?i)\b(monatlich|vierteljährlich|vierteljaehrlich|halbjährlich|halbjaehrlich|jährlich|jaehrlich|einmalig)\b`)
)

// dateOf is a German date (TT.MM.JJJJ) as YYYY-MM-DD, when it is a calendar date.
func dateOf(s string) (any, bool) {
	m := regexp.MustCompile(reDate).FindStringSubmatch(s)
	if m == nil {
		return nil, false
	}
	return isoDate(m[1], m[2], m[3])
}

func isoDate(d, m, y string) (any, bool) {
	pad := func(s string) string {
		if len(s) == 1 {
			return "0" + s
		}
		return s
	}
	iso := y + "-" + pad(m) + "-" + pad(d)
	if !validDate(iso) {
		return nil, false
	}
	return iso, true
}

// moneyOf is a German amount ("1.234,56") as a decimal string ("1234.56").
func moneyOf(s string) (any, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), ".", "")
	s = strings.Replace(s, ",", ".", 1)
	return s, s != "" && s[0] != '.'
}

// frequencyOf is the payment frequency a German word names.
func frequencyOf(w string) (string, bool) {
	switch strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(w, "ä", "ae"), "Ä", "ae")) {
	case "monatlich":
		return "monthly", true
	case "vierteljaehrlich":
		return "quarterly", true
	case "halbjaehrlich":
		return "half-yearly", true
	case "jaehrlich":
		return "yearly", true
	case "einmalig":
		return "single", true
	}
	return "", false
}

// Extract runs every rule over the pages' text (page 1 first) and returns the fields found,
// in key order. contractType, when the caller gave it, is the type field (rule type.given).
func Extract(pages []string, insurers []InsurerName, contractType string) []schematype.ExtractedField {
	ps := splitPages(pages)
	var out []schematype.ExtractedField
	add := func(f *schematype.ExtractedField) {
		if f != nil {
			out = append(out, *f)
		}
	}
	add(insurerRule(ps, insurers))
	add(labelled(ps, KeyPolicyNumber, "policy_number.label", rePolicyLabel, rePolicyValue, func(s string) (any, bool) {
		s = strings.TrimRight(strings.TrimSpace(s), ".-/")
		return s, len(s) >= 4 && strings.ContainsAny(s, "0123456789")
	}))
	if contractType != "" {
		out = append(out, schematype.ExtractedField{Key: KeyType, Value: contractType, Confidence: 1, Rule: "type.given"})
	} else {
		add(typeRule(ps))
	}
	start := labelled(ps, KeyStartDate, "start_date.label", reStartLabel, reDateValue, dateOf)
	end := labelled(ps, KeyEndDate, "end_date.label", reEndLabel, reDateValue, dateOf)
	if ps2, pe := periodRule(ps); ps2 != nil {
		if start == nil {
			start = ps2
		}
		if end == nil {
			end = pe
		}
	}
	add(start)
	add(end)
	premium, freq := premiumRule(ps)
	add(premium)
	add(freq)
	add(labelled(ps, KeyHolder, "holder.label", reHolderLabel, reHolderValue, func(s string) (any, bool) {
		s = strings.TrimSpace(s)
		return s, len([]rune(s)) >= 3
	}))
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// periodRule reads "Versicherungsdauer vom 01.01.2026 bis 01.01.2027" (rule period).
func periodRule(ps []page) (start, end *schematype.ExtractedField) {
	for _, p := range ps {
		for _, l := range p.lines {
			m := rePeriod.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			s, ok1 := isoDate(m[2], m[3], m[4])
			e, ok2 := isoDate(m[5], m[6], m[7])
			if !ok1 || !ok2 {
				continue
			}
			return &schematype.ExtractedField{Key: KeyStartDate, Value: s, Confidence: confSameLine, Page: p.no, Evidence: evidence(l), Rule: "period"},
				&schematype.ExtractedField{Key: KeyEndDate, Value: e, Confidence: confSameLine, Page: p.no, Evidence: evidence(l), Rule: "period"}
		}
	}
	return nil, nil
}

// premiumRule reads the premium from the line of the strongest premium label with an amount
// (Gesamtbeitrag/Zahlbeitrag before Jahres-/Monatsbeitrag before Beitrag/Prämie), and the
// payment frequency from that line, else from a "Zahlungsweise" line, else from the label
// (Jahresbeitrag: yearly, Monatsbeitrag: monthly).
func premiumRule(ps []page) (premium, freq *schematype.ExtractedField) {
	rank := func(label string) int {
		switch strings.ToLower(label) {
		case "gesamtbeitrag", "zahlbeitrag":
			return 3
		case "jahresbeitrag", "monatsbeitrag":
			return 2
		}
		return 1
	}
	best, bestLine, bestPage, bestLabel := 0, "", 0, ""
	var amount string
	for _, p := range ps {
		for _, l := range p.lines {
			lm := rePremiumLbl.FindStringSubmatchIndex(l)
			if lm == nil {
				continue
			}
			label := l[lm[2]:lm[3]]
			mm := reMoney.FindStringSubmatch(l[lm[1]:])
			if mm == nil {
				continue
			}
			if r := rank(label); r > best {
				best, bestLine, bestPage, bestLabel, amount = r, l, p.no, label, mm[1]
			}
		}
	}
	if best == 0 {
		return nil, nil
	}
	v, _ := moneyOf(amount)
	premium = &schematype.ExtractedField{Key: KeyPremium, Value: v, Confidence: confSameLine, Page: bestPage,
		Evidence: evidence(bestLine), Rule: "premium.label"}
	if w := reFrequency.FindString(bestLine); w != "" {
		if f, ok := frequencyOf(w); ok {
			return premium, &schematype.ExtractedField{Key: KeyPaymentFrequency, Value: f, Confidence: confSameLine,
				Page: bestPage, Evidence: evidence(bestLine), Rule: "frequency.premium_line"}
		}
	}
	for _, p := range ps {
		for _, l := range p.lines {
			if !strings.Contains(strings.ToLower(l), "zahlungsweise") {
				continue
			}
			if f, ok := frequencyOf(reFrequency.FindString(l)); ok {
				return premium, &schematype.ExtractedField{Key: KeyPaymentFrequency, Value: f, Confidence: confSameLine,
					Page: p.no, Evidence: evidence(l), Rule: "frequency.zahlungsweise"}
			}
		}
	}
	switch strings.ToLower(bestLabel) {
	case "jahresbeitrag":
		freq = &schematype.ExtractedField{Key: KeyPaymentFrequency, Value: "yearly", Confidence: confNextLine, Page: bestPage,
			Evidence: evidence(bestLine), Rule: "frequency.label"}
	case "monatsbeitrag":
		freq = &schematype.ExtractedField{Key: KeyPaymentFrequency, Value: "monthly", Confidence: confNextLine, Page: bestPage,
			Evidence: evidence(bestLine), Rule: "frequency.label"}
	}
	return premium, freq
}

// typeKeywords map words of a document to GDV Sparten (GET /contract-types), the more specific
// first: the first keyword a line holds decides for that line.
var typeKeywords = []struct {
	word, code string
}{
	{"privathaftpflicht", "041"}, {"betriebshaftpflicht", "042"}, {"berufshaftpflicht", "042"},
	{"vermögensschaden-haftpflicht", "044"}, {"tierhalterhaftpflicht", "040"}, {"hundehalterhaftpflicht", "040"},
	{"kfz-haftpflicht", "051"}, {"kraftfahrzeug-haftpflicht", "051"}, {"vollkasko", "052"}, {"teilkasko", "053"},
	{"kraftfahrtversicherung", "050"}, {"kfz-versicherung", "050"},
	{"hausratversicherung", "130"}, {"hausrat", "130"}, {"wohngebäudeversicherung", "140"}, {"wohngebäude", "140"},
	{"rechtsschutz", "070"}, {"unfallversicherung", "030"}, {"glasversicherung", "110"},
	{"pflegeversicherung", "028"}, {"krankenversicherung", "020"}, {"krankenzusatz", "020"},
	{"risikolebensversicherung", "010"}, {"rentenversicherung", "010"}, {"lebensversicherung", "010"},
	{"berufsunfähigkeit", "010"}, {"haftpflichtversicherung", "040"},
}

// typeRule scores each Sparte by its keywords: in the first five lines of page 1 (the title)
// a keyword counts 3, elsewhere 1; the best score wins (ties: the first keyword listed).
func typeRule(ps []page) *schematype.ExtractedField {
	score := map[string]int{}
	where := map[string]struct {
		page int
		line string
		rule string
	}{}
	for _, p := range ps {
		for i, l := range p.lines {
			low := strings.ToLower(l)
			for _, k := range typeKeywords {
				if !strings.Contains(low, k.word) {
					continue
				}
				w, rule := 1, "type.keyword"
				if p.no == 1 && i < 5 {
					w, rule = 3, "type.title"
				}
				score[k.code] += w
				if old, ok := where[k.code]; !ok || (rule == "type.title" && old.rule != "type.title") {
					where[k.code] = struct {
						page int
						line string
						rule string
					}{p.no, l, rule}
				}
				break
			}
		}
	}
	best := ""
	for _, k := range typeKeywords {
		if score[k.code] > score[best] || (best == "" && score[k.code] > 0) {
			best = k.code
		}
	}
	if best == "" {
		return nil
	}
	w := where[best]
	conf := confBody
	if w.rule == "type.title" {
		conf = confTitle
	}
	return &schematype.ExtractedField{Key: KeyType, Value: best, Confidence: conf, Page: w.page, Evidence: evidence(w.line), Rule: w.rule}
}

// genericName are words of insurer names that say nothing about which insurer it is.
var genericName = map[string]bool{"versicherung": true, "versicherungen": true, "allgemeine": true, "ag": true,
	"a.g.": true, "ag.": true, "vvag": true, "se": true, "gmbh": true, "kg": true, "lebensversicherung": true,
	"krankenversicherung": true, "versicherungs-ag": true, "versicherungsgesellschaft": true, "und": true,
	"der": true, "die": true, "vu": true, "(gdv-musterdatei)": true}

// nameTokens are an insurer name's distinctive words, lower case.
func nameTokens(name string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return unicode.IsSpace(r) || r == ',' }) {
		if !genericName[w] && len([]rune(w)) >= 3 && !strings.ContainsFunc(w, unicode.IsDigit) {
			out = append(out, w)
		}
	}
	return out
}

// insurerRule finds a catalog insurer: its full name on a line (insurer.name), else all its
// distinctive words on one line (insurer.words); the first page is read first, and the insurer
// with more distinctive words wins on the same line ("Stuttgarter Lebensversicherung" over a
// bare "Stuttgarter").
func insurerRule(ps []page, insurers []InsurerName) *schematype.ExtractedField {
	for _, p := range ps {
		for _, l := range p.lines {
			low := strings.ToLower(l)
			for _, in := range insurers {
				if len(in.Name) >= 4 && strings.Contains(low, strings.ToLower(in.Name)) {
					return &schematype.ExtractedField{Key: KeyInsurer, Value: in.ID.String(), Confidence: confSameLine,
						Page: p.no, Evidence: evidence(l), Rule: "insurer.name"}
				}
			}
		}
	}
	for _, p := range ps {
		for _, l := range p.lines {
			words := map[string]bool{}
			for _, w := range strings.FieldsFunc(strings.ToLower(l), func(r rune) bool { return unicode.IsSpace(r) || r == ',' }) {
				words[w] = true
			}
			var best *InsurerName
			bestN := 0
			for i, in := range insurers {
				ts := nameTokens(in.Name)
				if len(ts) == 0 {
					continue
				}
				all := true
				for _, t := range ts {
					all = all && words[t]
				}
				if all && len(ts) > bestN {
					best, bestN = &insurers[i], len(ts)
				}
			}
			if best != nil {
				return &schematype.ExtractedField{Key: KeyInsurer, Value: best.ID.String(), Confidence: confNextLine,
					Page: p.no, Evidence: evidence(l), Rule: "insurer.words"}
			}
		}
	}
	return nil
}
