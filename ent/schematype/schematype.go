// Package schematype holds Go types stored in ent schema fields. It imports nothing from ent,
// so the schema -> hook -> ent -> schema import cycle cannot form.
package schematype

import "time"

// ExternalRef identifies a record in a caller's own system: source is the caller's system key.
type ExternalRef struct {
	Source     string `json:"source"`
	ExternalID string `json:"externalId"`
}

// Address is a postal address.
type Address struct {
	Street      string `json:"street,omitempty"`
	HouseNumber string `json:"houseNumber,omitempty"`
	ZipCode     string `json:"zipCode,omitempty"`
	City        string `json:"city,omitempty"`
	Country     string `json:"country,omitempty"`
}

// Links are a company's public web addresses.
type Links struct {
	Website string `json:"website,omitempty"`
	Imprint string `json:"imprint,omitempty"`
	Privacy string `json:"privacy,omitempty"`
}

// Actor is who caused an event: a credential (with its user, if bound), the operator or the
// system.
type Actor struct {
	Type         string `json:"type"` // credential, operator or system
	CredentialID string `json:"credentialId,omitempty"`
	KeyPrefix    string `json:"keyPrefix,omitempty"`
	UserID       string `json:"userId,omitempty"`
}

// LeadRules are a company's duplicate rules for the lead intake: a submission matching an open
// (not converted) lead by one of the enabled keys updates that lead instead of creating one.
type LeadRules struct {
	MatchEmail bool `json:"matchEmail"` // normalised e-mail: trimmed, lower-cased
	MatchPhone bool `json:"matchPhone"` // phone in E.164, German numbers without country code +49
}

// DefaultLeadRules match by e-mail and by phone.
func DefaultLeadRules() LeadRules { return LeadRules{MatchEmail: true, MatchPhone: true} }

// ImportSource names the import that last wrote a record: the portfolio transfer, its format,
// the source key of its external references and where in the file the record stood.
type ImportSource struct {
	TransferID string    `json:"transferId"`
	Format     string    `json:"format"`
	Source     string    `json:"source,omitempty"`
	Line       int64     `json:"line,omitempty"`
	ImportedAt time.Time `json:"importedAt"`
}

// Sealed is one value encrypted at rest with AES-GCM (app/platform/datakeys): the id of the key that
// sealed it beside the ciphertext (nonce first), so keys can rotate value by value.
type Sealed struct {
	KeyID string `json:"kid"`
	Data  []byte `json:"ct"`
}

// ContactGroups are the non-sensitive field groups of a contact by group name, each a map of
// field key to value as the catalog (GET /contact-fields) types it.
type ContactGroups map[string]map[string]any

// MailAddress is one address of an e-mail header (To, Cc, Bcc): the address and its display
// name, both as received or entered.
type MailAddress struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
}
