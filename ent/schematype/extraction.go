package schematype

// ExtractedField is one field a contract extraction read from a document: the dotted key of the
// contract field (e.g. "policyNumber", "premium.amount"), its value (string, number, boolean or
// null), how sure the rule that found it is (0–1), and the evidence: the page and the text the
// value was read from.
type ExtractedField struct {
	Key        string  `json:"key"`
	Value      any     `json:"value"`
	Confidence float64 `json:"confidence"`
	Page       int     `json:"page,omitempty"`
	Evidence   string  `json:"evidence,omitempty"`
	// Rule names the rule that found the value (docs/decisions/extraction.md lists them).
	Rule string `json:"rule,omitempty"`
}
