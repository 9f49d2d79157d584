package emails

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/emailthread"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Threading (docs/decisions/email.md "Threads"). A message joins a thread of its own mailbox:
//  1. the thread of the message its In-Reply-To names;
//  2. else the thread of the newest message its References name (the list is oldest first, so
//     it is read from the end);
//  3. else, only for inbound mail carrying neither header (clients that drop them), the thread
//     of the same mailbox with the same subject key whose last message is at most
//     SubjectWindow older than this one: a reply a client stripped of its headers still lands
//     beside what it answers, while a new enquiry titled "Frage" half a year later does not;
//  4. else a new thread.
// A message that names a message we do not hold (yet) falls through to the next rule: threads are
// never merged afterwards.

// SubjectWindow is how far back the subject fallback looks.
const SubjectWindow = 30 * 24 * time.Hour

// replyPrefixes are the reply and forward markers SubjectKey strips (English and German mail
// clients, and Outlook's localised ones): "Re:", "AW:", "Fwd:", "Fw:", "WG:", also numbered
// ("Re[2]:", "Re^2:") and with a space before the colon ("AW :").
var replyPrefixes = []string{"re", "aw", "fwd", "fw", "wg", "antw", "sv", "vs", "tr"}

// SubjectKey is the threading key of a subject: reply and forward prefixes stripped (repeatedly),
// runs of white space made one space, lower case. "AW: WG: Re[2]:  Kündigung " → "kündigung".
func SubjectKey(subject string) string {
	s := strings.Join(strings.Fields(subject), " ")
	for {
		rest, ok := stripPrefix(s)
		if !ok {
			break
		}
		s = rest
	}
	return strings.ToLower(s)
}

// stripPrefix removes one leading reply or forward marker of s.
func stripPrefix(s string) (string, bool) {
	lower := strings.ToLower(s)
	for _, p := range replyPrefixes {
		if !strings.HasPrefix(lower, p) {
			continue
		}
		rest := s[len(p):]
		// a counter: "[2]" or "^2"
		if strings.HasPrefix(rest, "[") {
			if end := strings.IndexByte(rest, ']'); end > 1 && allDigits(rest[1:end]) {
				rest = rest[end+1:]
			}
		} else if strings.HasPrefix(rest, "^") {
			i := 1
			for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
				i++
			}
			if i > 1 {
				rest = rest[i:]
			}
		}
		rest = strings.TrimLeft(rest, " ")
		for _, colon := range []string{":", "："} { // the full-width one of East Asian clients
			if after, ok := strings.CutPrefix(rest, colon); ok {
				return strings.TrimLeftFunc(after, unicode.IsSpace), true
			}
		}
	}
	return s, false
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// threadRefs are the headers of a message that threading reads.
type threadRefs struct {
	InReplyTo  string
	References []string // oldest first, as in the header
	Subject    string
	Inbound    bool
	At         time.Time // the message's time (its Date, or when it was stored)
}

// candidates are the message ids to look up, in order of preference: In-Reply-To, then the
// References newest first, each once.
func (r threadRefs) candidates() []string {
	var out []string
	add := func(id string) {
		if id == "" {
			return
		}
		for _, o := range out {
			if o == id {
				return
			}
		}
		out = append(out, id)
	}
	add(r.InReplyTo)
	for i := len(r.References) - 1; i >= 0; i-- {
		add(r.References[i])
	}
	return out
}

// findThread is the thread of mailbox a message with refs joins, or nil for a new thread. One
// query for the headers (the unique index on company, mailbox and message id), one for the
// subject fallback when it applies.
func findThread(ctx context.Context, mailbox uuid.UUID, r threadRefs) (*ent.EmailThread, error) {
	db := tenancy.Client(ctx)
	if ids := r.candidates(); len(ids) > 0 {
		if len(ids) > maxReferences {
			ids = ids[:maxReferences]
		}
		// One lookup per id, In-Reply-To first, until one hits: each is a probe of the unique
		// index (mailbox, message_id), 0.25 ms; one "message_id IN (…)" was planned as a scan of
		// the mailbox on fresh tables, 20 ms at 8,000 messages (docs/perf-notes/2026-12-07-email.md).
		for _, id := range ids {
			e, err := db.Email.Query().Where(email.MailboxID(mailbox), email.MessageID(id)).
				Select(email.FieldThreadID).Only(ctx)
			if ent.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("thread by references: %w", err)
			}
			t, err := db.EmailThread.Get(ctx, e.ThreadID)
			if err != nil {
				return nil, fmt.Errorf("thread %s: %w", e.ThreadID, err)
			}
			return t, nil
		}
		return nil, nil // it answers something we do not hold: a thread of its own, never by subject
	}
	key := SubjectKey(r.Subject)
	if !r.Inbound || key == "" {
		return nil, nil
	}
	t, err := db.EmailThread.Query().Where(emailthread.MailboxID(mailbox), emailthread.SubjectKey(key),
		emailthread.LastMessageAtGTE(r.At.Add(-SubjectWindow))).
		Order(ent.Desc(emailthread.FieldLastMessageAt), ent.Desc(emailthread.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("thread by subject: %w", err)
	}
	return t, nil
}

// maxReferences bounds the ids one message may make us look up (a References header of
// thousands of ids is an attack, not a conversation): In-Reply-To and the newest ones.
const maxReferences = 50

// addToThread counts one more message in thread id whose time is at: message_count + 1 and
// last_message_at the later of the two, in one statement, so a send appending to the same
// thread at the same time loses neither.
func addToThread(ctx context.Context, id uuid.UUID, at, now time.Time) error {
	_, err := tenancy.Client(ctx).ExecContext(ctx, addToThreadSQL, id, at, now)
	if err != nil {
		return fmt.Errorf("count message in thread %s: %w", id, err)
	}
	return nil
}

// addToThreadSQL: ent's update builder cannot say GREATEST(column, value).
const addToThreadSQL = `UPDATE email_threads SET message_count = message_count + 1,
	last_message_at = GREATEST(last_message_at, $2), updated_at = $3 WHERE id = $1`
