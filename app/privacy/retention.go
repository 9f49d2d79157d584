package privacy

import "time"

// rule is how long a kind of record is kept after an erasure, and the provision that keeps it
// (docs/decisions/privacy.md "Retention"). Periods run to the end of a calendar year (HGB § 257
// (5), AO § 147 (4)): counted conservatively from the end of the year of the erasure, since the
// record's last change or receipt was at the latest then.
type rule struct {
	years int
	basis string
}

var (
	// ruleLetter: business letters received and sent (applications, policies, offers, mandates,
	// the e-mail with the customer): 6 years.
	ruleLetter = rule{6, "HGB § 257 (1) Nr. 2-3, (4); AO § 147 (1) Nr. 2-3, (3): Handels- und Geschäftsbriefe, 6 Jahre"}
	// ruleVoucher: accounting vouchers (an invoice; a contract that commission entries were
	// booked on): 8 years since BEG IV (Buchungsbelege, from 1 January 2025).
	ruleVoucher = rule{8, "HGB § 257 (1) Nr. 4, (4); AO § 147 (1) Nr. 4, (3) i. d. F. des BEG IV: Buchungsbelege, 8 Jahre"}
	// ruleAdvice: the broker's advice documentation (§ 61 (1), § 62 VVG; § 63 VVG liability),
	// kept to defend claims until the longest limitation period (§ 199 (3) S. 1 Nr. 1 BGB) ends;
	// GDPR Art. 17 (3) lit. e.
	ruleAdvice = rule{10, "§§ 61, 62, 63 VVG mit § 199 (3) S. 1 Nr. 1 BGB; Art. 17 (3) lit. e DSGVO: Beratungsdokumentation, 10 Jahre"}
	// ruleIdentification: identification records of life-insurance brokerage (GwG § 2 (1) Nr. 8),
	// 5 years.
	ruleIdentification = rule{5, "GwG § 8 (4) S. 1: Identifizierungsunterlagen, 5 Jahre"}
	// ruleObjection: the proof that the person objected to advertising e-mail (accountability,
	// Art. 5 (2), Art. 21 (3) DSGVO), for the regular limitation period of 3 years (§ 195 BGB).
	ruleObjection = rule{3, "Art. 5 (2), 21 (3) DSGVO mit § 195 BGB: Nachweis des Werbewiderspruchs, 3 Jahre"}
)

// documentRule is the rule of a document by its type; ok false: not kept (a privacy consent,
// "other": no duty to keep, deleted with the contact).
func documentRule(typ string) (rule, bool) {
	switch typ {
	case "advice_documentation":
		return ruleAdvice, true
	case "invoice":
		return ruleVoucher, true
	case "policy", "application", "offer", "broker_agreement", "power_of_attorney", "correspondence":
		return ruleLetter, true
	case "identification":
		return ruleIdentification, true
	}
	return rule{}, false
}

// until is the last day a record of r is kept after an erasure at now.
func (r rule) until(now time.Time) time.Time {
	return time.Date(now.Year()+r.years, time.December, 31, 0, 0, 0, 0, time.UTC)
}
