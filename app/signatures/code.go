package signatures

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"math/big"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The one-time code proves that whoever signs reads the signer's mailbox (the link alone may
// have been forwarded): six digits, mailed on request, valid for 10 minutes and for one
// signature, void after 5 wrong tries (a guess then has 5 in a million chances per mail, and
// mails are one a minute).
const (
	codeTTL         = 10 * time.Minute
	codeInterval    = time.Minute // at most one code mail per signer in this time
	codeMaxAttempts = 5
)

// newCode is a uniformly random six-digit code.
func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("one-time code: %w", err)
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// codeHash is what the signer row keeps of a code: an HMAC under a key derived from the app
// secret, not a plain SHA-256, which a copy of the table would reverse by trying the million
// codes; bound to the signer, so one signer's hash is no other's.
func (m *Module) codeHash(signer uuid.UUID, code string) []byte {
	mac := hmac.New(sha256.New, m.pageKey("code"))
	mac.Write(signer[:])
	mac.Write([]byte(code))
	return mac.Sum(nil)
}

// errCodeTooSoon: a code was mailed less than codeInterval ago; next is when one may be had.
type errCodeTooSoon struct{ next time.Time }

func (e errCodeTooSoon) Error() string { return "one-time code requested too soon" }

// sendCode mails the signer of v a new code (the request row is locked: v came from open with
// lock) and stores its hash, expiry, sending time and zero attempts. A code mailed less than a
// minute ago refuses with errCodeTooSoon and mails nothing.
func (m *Module) sendCode(ctx context.Context, v *visit) error {
	now := m.d.Now()
	s := v.signer
	if s.CodeSentAt != nil && now.Sub(*s.CodeSentAt) < codeInterval {
		return errCodeTooSoon{next: s.CodeSentAt.Add(codeInterval)}
	}
	// The request's mailbox, else (deleted since) the company's shared one, as reminders do.
	mb, err := resolveMailbox(ctx, v.req.MailboxID)
	if err == nil && mb == nil {
		mb, err = resolveMailbox(ctx, nil)
	}
	if err != nil {
		return err
	}
	if mb == nil {
		return fmt.Errorf("signature request %s has no mailbox to send codes from", v.req.ID)
	}
	code, err := newCode()
	if err != nil {
		return err
	}
	if v.signer, err = tenancy.Client(ctx).SignatureSigner.UpdateOne(s).
		SetCodeHash(m.codeHash(s.ID, code)).
		SetCodeExpiresAt(now.Add(codeTTL)).
		SetCodeAttempts(0).
		SetCodeSentAt(now).
		Save(ctx); err != nil {
		return fmt.Errorf("store code of signer %s: %w", s.ID, err)
	}
	// Free: a signing code is not the broker's mailing. Secrets: the copy of the mail the API
	// shows has the code blanked, so nobody in the company can sign in the signer's place.
	// No ContactID: a code is not correspondence for the contact's timeline.
	_, err = m.d.Emails.Send(ctx, emails.Outgoing{
		MailboxID: mb.ID,
		To:        []schematype.MailAddress{{Email: s.Email, Name: s.Name}},
		Subject:   "Ihr Bestätigungscode für „" + v.req.Title + "“",
		Text: "Guten Tag " + s.Name + ",\n\n" +
			"Ihr Bestätigungscode: " + code + "\n\n" +
			"Geben Sie ihn auf der Unterschriftsseite ein. Der Code gilt 10 Minuten und nur für eine Unterschrift.\n" +
			"Wenn Sie keinen Code angefordert haben, ignorieren Sie diese E-Mail; ohne den Code kann niemand in Ihrem Namen unterschreiben.\n\n" +
			"Mit freundlichen Grüßen\n" + v.companyName + "\n",
		Free:    true,
		Secrets: []string{code},
	})
	if err != nil {
		return fmt.Errorf("mail code to signer %s: %w", s.ID, err)
	}
	return nil
}

// codeRefusal is a code the page refuses; its text is the page's message.
type codeRefusal string

func (r codeRefusal) Error() string { return string(r) }

// Outcomes of checking a code.
const (
	errCodeMissing codeRefusal = "Bitte geben Sie den Code aus der E-Mail ein."
	errCodeNone    codeRefusal = "Bitte fordern Sie zuerst einen Code per E-Mail an."
	errCodeExpired codeRefusal = "Der Code ist abgelaufen. Bitte fordern Sie einen neuen Code an."
	errCodeWrong   codeRefusal = "Der Code ist nicht richtig. Bitte prüfen Sie die Ziffern."
	errCodeVoid    codeRefusal = "Der Code wurde zu oft falsch eingegeben und ist nicht mehr gültig. " +
		"Bitte fordern Sie einen neuen Code an."
)

// checkCode checks code against the signer's (row locked) and counts a wrong one: the fifth
// wrong try voids the code. nil means the code is right; the caller clears it with the
// signature (one code, one signature). The errors' texts are the page's messages.
func (m *Module) checkCode(ctx context.Context, s *ent.SignatureSigner, code string) error {
	switch {
	case code == "":
		return errCodeMissing
	case !hasCode(s):
		return errCodeNone
	case s.CodeExpiresAt == nil || !m.d.Now().Before(*s.CodeExpiresAt):
		return errCodeExpired
	case hmac.Equal(*s.CodeHash, m.codeHash(s.ID, code)):
		return nil
	}
	u := tenancy.Client(ctx).SignatureSigner.UpdateOne(s).AddCodeAttempts(1)
	var result error = errCodeWrong
	if s.CodeAttempts+1 >= codeMaxAttempts {
		u.ClearCodeHash().ClearCodeExpiresAt()
		result = errCodeVoid
	}
	if err := u.Exec(ctx); err != nil {
		return fmt.Errorf("count code attempt of signer %s: %w", s.ID, err)
	}
	return result
}

// hasCode says whether the signer has a code to check (ent reads a NULL code_hash as a pointer
// to an empty slice, not as nil).
func hasCode(s *ent.SignatureSigner) bool { return s.CodeHash != nil && len(*s.CodeHash) > 0 }
