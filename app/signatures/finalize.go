package signatures

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/documents"
	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/app/platform/pdfseal"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/document"
	"github.com/brokerdesk/brokerdesk/ent/signaturerequest"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// sealReason is the reason in the PAdES signature of every signed PDF.
const sealReason = "Elektronisch unterschrieben über BrokerDesk"

// roleLabels name the signers' roles on the (German) audit page.
var roleLabels = map[string]string{"contact": "Kunde", "broker": "Makler", "other": "Weitere Person"}

// finalize completes r once every signer signed, in the transaction of ctx, with r's row locked
// (the signing POST's): the merged source, checked against the hash the signers were shown,
// gets each signer's signature in their fields and the audit page, is sealed (PAdES, the
// company's name as signer) and filed as a document of the contact; the request is completed
// with signed_document_id, signature_request.completed is recorded and the OnCompleted hooks
// run. Any failure returns an error and the caller's transaction rolls back everything, the
// last signature included: never a completed request without its sealed document, nor a
// document of a request that is not completed.
func (m *Module) finalize(ctx context.Context, r *ent.SignatureRequest, signers []*ent.SignatureSigner) (*ent.SignatureRequest, error) {
	src, err := m.d.Bucket.ReadAll(ctx, r.SourceBlobKey)
	if err != nil {
		return nil, fmt.Errorf("read source of signature request %s: %w", r.ID, err)
	}
	sum := sha256.Sum256(src)
	if hex.EncodeToString(sum[:]) != r.SourceSha256 {
		// The PDF in storage is not the one the signers saw: nothing may be signed on it.
		return nil, fmt.Errorf("source of signature request %s changed in storage (sha256 %x, want %s)", r.ID, sum, r.SourceSha256)
	}
	now := m.d.Now()
	bySigner := make(map[int]*ent.SignatureSigner, len(signers))
	for _, s := range signers {
		bySigner[s.Position] = s
	}
	var apps []pdf.Appearance
	for _, f := range r.Fields {
		s, ok := bySigner[f.Signer]
		if !ok || s.SignedAt == nil {
			return nil, fmt.Errorf("signature request %s: field on page %d for signer %d, who did not sign", r.ID, f.Page, f.Signer)
		}
		apps = append(apps, pdf.Appearance{Field: f, PNG: signatureOf(s), Caption: s.Name + ", " + berlinTime(*s.SignedAt)})
	}
	out := src
	if len(apps) > 0 {
		if out, err = pdf.Stamp(out, apps); err != nil {
			return nil, fmt.Errorf("stamp signatures on signature request %s: %w", r.ID, err)
		}
	}
	audit := pdf.Audit{Title: r.Title, RequestID: r.ID.String(), DocumentHash: r.SourceSha256, Pages: r.PageCount,
		CreatedAt: r.CreatedAt, CompletedAt: now}
	for _, s := range signers {
		a := pdf.AuditSigner{Name: s.Name, Email: s.Email, Role: roleLabels[string(s.Role)], IP: s.SignedIP,
			UserAgent: s.SignedUserAgent, Signature: signatureOf(s)}
		if s.VerifiedAt != nil {
			a.VerifiedAt = *s.VerifiedAt
		}
		if s.SignedAt != nil {
			a.SignedAt = *s.SignedAt
		}
		audit.Signers = append(audit.Signers, a)
	}
	if out, err = pdf.AppendAudit(out, audit); err != nil {
		return nil, fmt.Errorf("audit page of signature request %s: %w", r.ID, err)
	}
	if m.d.Sealer == nil {
		return nil, errors.New("no seal configured (SIGNING_KEY_FILE, SIGNING_CERT_FILE): signed PDFs cannot be sealed")
	}
	company, err := companyName(ctx)
	if err != nil {
		return nil, err
	}
	if out, err = m.d.Sealer.Seal(out, pdfseal.Info{Name: company, Reason: sealReason, Time: now}); err != nil {
		return nil, fmt.Errorf("seal signature request %s: %w", r.ID, err)
	}
	typ, err := commonType(ctx, r)
	if err != nil {
		return nil, err
	}
	doc, err := m.d.Docs.Create(ctx, documents.NewDocument{ContactID: r.ContactID, Type: typ,
		Filename: pdfName(r.Title, " (unterschrieben)")}, bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("file signed PDF of signature request %s: %w", r.ID, err)
	}
	if r, err = tenancy.Client(ctx).SignatureRequest.UpdateOne(r).
		SetStatus(signaturerequest.StatusCompleted).
		SetCompletedAt(now).
		SetSignedDocumentID(doc.ID).
		Save(ctx); err != nil {
		return nil, fmt.Errorf("complete signature request %s: %w", r.ID, err)
	}
	if err := m.recordEvent(ctx, "signature_request.completed", r); err != nil {
		return nil, err
	}
	for _, fn := range m.onCompleted {
		if err := fn(ctx, r); err != nil {
			return nil, fmt.Errorf("complete signature request %s: %w", r.ID, err)
		}
	}
	return r, nil
}

// companyName is the name of the company of ctx, the signer named in the seal.
func companyName(ctx context.Context) (string, error) {
	id, ok := tenancy.CompanyID(ctx)
	if !ok {
		return "", tenancy.ErrNoCompany
	}
	co, err := tenancy.Client(ctx).Company.Get(ctx, id)
	if err != nil {
		return "", fmt.Errorf("read company %s: %w", id, err)
	}
	return co.Name, nil
}

// commonType is the document type of the signed PDF: the type of the request's contact
// documents when all of them share one (a mandate sent alone stays a broker_agreement), else
// other. A standard document has no type and a document deleted since counts as none: other.
func commonType(ctx context.Context, r *ent.SignatureRequest) (string, error) {
	var ids []uuid.UUID
	for _, s := range r.Documents {
		if s.DocumentID == nil {
			return string(document.TypeOther), nil
		}
		ids = append(ids, *s.DocumentID)
	}
	if len(ids) == 0 {
		return string(document.TypeOther), nil
	}
	docs, err := tenancy.Client(ctx).Document.Query().Where(document.IDIn(ids...)).All(ctx)
	if err != nil {
		return "", fmt.Errorf("read documents of signature request %s: %w", r.ID, err)
	}
	seen := map[uuid.UUID]bool{}
	typ := document.Type("")
	for _, d := range docs {
		seen[d.ID] = true
		if typ != "" && d.Type != typ {
			return string(document.TypeOther), nil
		}
		typ = d.Type
	}
	for _, id := range ids {
		if !seen[id] {
			return string(document.TypeOther), nil
		}
	}
	return string(typ), nil
}

// signatureOf is the signature image of a signer (nil before signing).
func signatureOf(s *ent.SignatureSigner) []byte {
	if s.Signature == nil {
		return nil
	}
	return *s.Signature
}
