package schematype

import "github.com/google/uuid"

// SignatureField is where a signer's signature goes: on page Page (1-based) of a PDF, a
// rectangle with its top-left corner at (X, Y) and size (Width, Height), all relative to the
// page (0–1, origin top left, as the spec's explicit fields). Signer is the position of the
// signer in the request (0-based); in a template or a standard document, where no signers
// exist yet, Role says whose field it is (contact, broker) and Signer is unused.
type SignatureField struct {
	Signer int     `json:"signer"`
	Role   string  `json:"role,omitempty"`
	Page   int     `json:"page"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// SignatureSource is one document of a signature request: a contact document or a standard
// document, with the name and page count it had when the request was made.
type SignatureSource struct {
	DocumentID         *uuid.UUID `json:"documentId,omitempty"`
	StandardDocumentID *uuid.UUID `json:"standardDocumentId,omitempty"`
	Filename           string     `json:"filename"`
	Pages              int        `json:"pages"`
}

// AdviceProduct is a product discussed in a consultation: recommended, or chosen by the
// customer against the recommendation.
type AdviceProduct struct {
	Insurer      string `json:"insurer"`
	Product      string `json:"product"`
	ContractType string `json:"contractType,omitempty"`
	Premium      *Money `json:"premium,omitempty"`
	Recommended  bool   `json:"recommended"`
	Chosen       bool   `json:"chosen"`
}
