package pdfseal_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
)

// signedPDF is what app/signatures seals: two rendered documents merged, the signers'
// appearances stamped into their fields, the audit pages appended (app/platform/pdf).
func signedPDF(t testing.TB) []byte {
	t.Helper()
	meta := pdf.Meta{Title: "Maklervertrag", Author: "Muster Makler GmbH", CreatedAt: sealedAt}
	body := "# Maklervertrag\n\nzwischen {{contact.name}} und {{company.name}}\n---\n" +
		"## § 1 Gegenstand\nDer Kunde beauftragt den Makler mit der Vermittlung von Versicherungen.\n\n" +
		"{{signature:contact}}\n{{signature:broker}}\n"
	a, err := pdf.Render(body, map[string]string{"contact.name": "Jürgen Müller", "company.name": "Muster Makler GmbH"}, meta)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pdf.Render("# Maklervollmacht\n\nIch bevollmächtige den Makler.\n{{signature:contact}}\n", nil, meta)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := pdf.Merge([][]byte{a.PDF, b.PDF})
	if err != nil {
		t.Fatal(err)
	}
	img, err := pdf.TypedSignature("Jürgen Müller")
	if err != nil {
		t.Fatal(err)
	}
	var apps []pdf.Appearance
	for _, f := range a.Fields {
		apps = append(apps, pdf.Appearance{Field: f, PNG: img, Caption: "Jürgen Müller, " + sealedAt.Format("02.01.2006")})
	}
	stamped, err := pdf.Stamp(merged, apps)
	if err != nil {
		t.Fatal(err)
	}
	hash := sha256.Sum256(merged)
	out, err := pdf.AppendAudit(stamped, pdf.Audit{Title: "Maklervertrag", RequestID: "5f0c5a3e-0000-4000-8000-000000000001",
		DocumentHash: hex.EncodeToString(hash[:]), Pages: a.Pages + b.Pages, CreatedAt: sealedAt.Add(-time.Hour),
		CompletedAt: sealedAt, Signers: []pdf.AuditSigner{{Name: "Jürgen Müller", Email: "j.mueller@example.org",
			Role: "contact", VerifiedAt: sealedAt.Add(-time.Minute), SignedAt: sealedAt, IP: "203.0.113.7",
			UserAgent: "Mozilla/5.0", Signature: img}}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSeal_SigningPipeline: the PDF the signing area seals (rendered, merged, stamped, audit
// pages appended by app/platform/pdf) seals into one valid, whole-document signature for
// pdfsig, and the sealed file still passes app/platform/pdf's own validation and pdfcpu's.
// It catches a seal that only works on the plain fpdf files of the other tests.
func TestSeal_SigningPipeline(t *testing.T) {
	in := signedPDF(t)
	out, err := devSealer(t).Seal(in, info())
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, pdfsig(t, out), "- Signature Type: ETSI.CAdES.detached", "- Total document signed",
		"- Signature Validation: Signature is Valid.")
	if err := pdf.Validate(out); err != nil {
		t.Errorf("pdf.Validate: %v", err)
	}
	if err := api.Validate(bytes.NewReader(out), writeConfig()); err != nil {
		t.Errorf("pdfcpu validate: %v", err)
	}
}
