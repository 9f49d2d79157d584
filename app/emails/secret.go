package emails

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// mailboxAAD is the additional data a mailbox password is sealed with: the mailbox id, so a
// sealed password copied to another mailbox row does not open.
func mailboxAAD(id uuid.UUID) []byte { return []byte("mailbox:" + id.String()) }

// SealPassword seals a mailbox password with the data keys (DATA_KEYS), bound to the mailbox
// id: the bytes stored in password_sealed (the JSON of a schematype.Sealed). The password is
// never returned by the API, never logged.
func SealPassword(keys *datakeys.Keyring, password string, mailbox uuid.UUID) ([]byte, error) {
	return json.Marshal(keys.Seal([]byte(password), mailboxAAD(mailbox)))
}

// OpenPassword opens the sealed password of m (the send and sync workers, mailbox check).
func OpenPassword(keys *datakeys.Keyring, m *ent.Mailbox) (string, error) {
	var sealed schematype.Sealed
	if err := json.Unmarshal(m.PasswordSealed, &sealed); err != nil {
		return "", fmt.Errorf("mailbox %s: sealed password: %w", m.ID, err)
	}
	p, err := keys.Open(sealed, mailboxAAD(m.ID))
	if err != nil {
		return "", fmt.Errorf("mailbox %s: open password: %w", m.ID, err)
	}
	return string(p), nil
}
