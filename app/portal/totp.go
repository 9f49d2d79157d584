package portal

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // RFC 6238's default, which every authenticator app speaks
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// TOTP (RFC 6238 over RFC 4226's HOTP) with the parameters every authenticator app assumes
// when the otpauth URI names them or not: HMAC-SHA-1, 6 digits, 30-second steps. A code is good
// in its step and the one before and after (clock drift of a phone), and once: the access keeps
// the last step accepted (totp_last_step) and only a later step passes. Thirty lines do not
// justify a dependency.
const (
	totpDigits    = 6
	totpPeriod    = 30 // seconds
	totpSkew      = 1  // steps either side
	totpSecretLen = 20 // bytes: RFC 4226's recommended 160 bits
)

var totpEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// hotp is RFC 4226's HOTP value of counter, as totpDigits decimal digits.
func hotp(key []byte, counter uint64) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	mac := hmac.New(sha1.New, key)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%0*d", totpDigits, v%1_000_000)
}

// totpStep is the time step of t.
func totpStep(t time.Time) int64 { return t.Unix() / totpPeriod }

// totpCheck returns the step of code: one within totpSkew of now's and after last (the last
// step accepted), or false. It compares every candidate in constant time.
func totpCheck(key []byte, code string, now time.Time, last int64) (int64, bool) {
	if len(code) != totpDigits {
		return 0, false
	}
	for _, r := range code {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	cur := totpStep(now)
	found := int64(0)
	for s := cur - totpSkew; s <= cur+totpSkew; s++ {
		if subtle.ConstantTimeCompare([]byte(hotp(key, uint64(s))), []byte(code)) == 1 && s > last && found == 0 {
			found = s
		}
	}
	return found, found != 0
}

// newTOTPKey is a fresh random shared secret.
func newTOTPKey() ([]byte, error) {
	k := make([]byte, totpSecretLen)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	return k, nil
}

// totpURI is the otpauth:// URI of key (Google Authenticator's Key Uri Format), labelled with
// the brokerage and the customer's e-mail address, which authenticator apps import.
func totpURI(key []byte, issuer, account string) string {
	q := url.Values{}
	q.Set("secret", totpEncoding.EncodeToString(key))
	q.Set("issuer", issuer)
	q.Set("algorithm", "SHA1")
	q.Set("digits", fmt.Sprint(totpDigits))
	q.Set("period", fmt.Sprint(totpPeriod))
	return "otpauth://totp/" + url.PathEscape(issuer+":"+account) + "?" + q.Encode()
}

// totpAAD binds a sealed TOTP secret to its access: copied into another row it does not open.
func totpAAD(company, access uuid.UUID) []byte {
	return []byte("portal-totp:" + company.String() + "/" + access.String())
}

// sealTOTP seals key with the data keys for access: the bytes stored in totp_secret (the JSON
// of a schematype.Sealed, as mailbox passwords are stored).
func sealTOTP(keys *datakeys.Keyring, company, access uuid.UUID, key []byte) ([]byte, error) {
	return json.Marshal(keys.Seal(key, totpAAD(company, access)))
}

// storedTOTP is the sealed secret of acc, nil when there is none (ent reads a NULL column as a
// pointer to an empty slice).
func storedTOTP(acc *ent.PortalAccess) []byte {
	if acc.TotpSecret == nil || len(*acc.TotpSecret) == 0 {
		return nil
	}
	return *acc.TotpSecret
}

// openTOTP opens the stored totp_secret of access.
func openTOTP(keys *datakeys.Keyring, company, access uuid.UUID, stored []byte) ([]byte, error) {
	var s schematype.Sealed
	if err := json.Unmarshal(stored, &s); err != nil {
		return nil, fmt.Errorf("portal access %s: sealed totp secret: %w", access, err)
	}
	k, err := keys.Open(s, totpAAD(company, access))
	if err != nil {
		return nil, fmt.Errorf("portal access %s: open totp secret: %w", access, err)
	}
	return k, nil
}
