package reports

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/appointment"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/lead"
	"github.com/brokerdesk/brokerdesk/ent/leadstage"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/ent/task"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// The fixtures of the pipeline and activity tests, written straight as the app role pinned to
// the company (env.InCompany: RLS and the ent rules apply as in a request) because the
// reports read timestamps no endpoint lets a client set: createdAt, convertedAt, completedAt.

var plSeq atomic.Int64

// berlin is a wall-clock time in Europe/Berlin, the zone of the reports' days.
func berlin(y int, m time.Month, d, hh, mm, ss int) time.Time {
	return time.Date(y, m, d, hh, mm, ss, 0, httpx.Berlin)
}

// plLead is a lead to seed: owner, source ("" none), stage key, creation time, conversion time
// (nil: not converted), test flag.
type plLead struct {
	Owner     *uuid.UUID
	Source    string
	Stage     string
	Created   time.Time
	Converted *time.Time
	Test      bool
}

// plStage adds a company stage at position pos and returns its key.
func plStage(t *testing.T, env *apitest.Env, co uuid.UUID, key, name string, pos int) {
	t.Helper()
	env.InCompany(t, co, func(ctx context.Context, db *ent.Client) error {
		return db.LeadStage.Create().SetKey(key).SetName(name).SetPosition(pos).Exec(ctx)
	})
}

// plLeads seeds leads.
func plLeads(t *testing.T, env *apitest.Env, co uuid.UUID, leads ...plLead) {
	t.Helper()
	env.InCompany(t, co, func(ctx context.Context, db *ent.Client) error {
		for _, l := range leads {
			st, err := db.LeadStage.Query().Where(leadstage.Key(l.Stage)).Only(ctx)
			if err != nil {
				return fmt.Errorf("stage %s: %w", l.Stage, err)
			}
			c := db.Lead.Create().SetFirstName("Lea").SetLastName(fmt.Sprintf("Lead %d", plSeq.Add(1))).
				SetStageID(st.ID).SetNillableOwnerID(l.Owner).SetCreatedAt(l.Created).SetUpdatedAt(l.Created).
				SetTest(l.Test)
			if l.Source != "" {
				c.SetSource(lead.Source(l.Source))
			}
			if l.Converted != nil {
				c.SetConverted(true).SetConvertedAt(*l.Converted)
			}
			if err := c.Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

// actContact seeds a contact owned by owner, created at created.
func actContact(t *testing.T, env *apitest.Env, co uuid.UUID, owner *uuid.UUID, created time.Time) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	env.InCompany(t, co, func(ctx context.Context, db *ent.Client) error {
		c, err := db.Contact.Create().SetType("private").SetFirstName("Kai").SetLastName(fmt.Sprintf("Kunde %d", plSeq.Add(1))).
			SetNillableOwnerID(owner).SetCreatedAt(created).SetUpdatedAt(created).Save(ctx)
		if err == nil {
			id = c.ID
		}
		return err
	})
	return id
}

// actContract seeds a contract of contact with owner (nil: none), premium and frequency, and
// the annual premium the contracts service would write with them (annual "" for none).
func actContract(t *testing.T, env *apitest.Env, co, contact uuid.UUID, owner *uuid.UUID, premium, freq, annual string, created time.Time) {
	t.Helper()
	env.InCompany(t, co, func(ctx context.Context, db *ent.Client) error {
		ins, err := db.Insurer.Query().First(ctx)
		if err != nil {
			return fmt.Errorf("an insurer of the catalog: %w", err)
		}
		c := db.Contract.Create().SetContactID(contact).SetInsurerID(ins.ID).
			SetPolicyNumber(fmt.Sprintf("PN-%d", plSeq.Add(1))).SetType("010").SetStatus(contract.StatusActive).
			SetPremium(schematype.MustMoney(premium)).SetPaymentFrequency(contract.PaymentFrequency(freq)).
			SetNillableOwnerID(owner).SetCreatedAt(created).SetUpdatedAt(created)
		if annual != "" {
			c.SetAnnualPremium(schematype.MustMoney(annual))
		}
		return c.Exec(ctx)
	})
}

// actTask seeds a task about contact (nil: none) assigned to assignee; completed nil: open.
func actTask(t *testing.T, env *apitest.Env, co uuid.UUID, contact, assignee *uuid.UUID, completed *time.Time) {
	t.Helper()
	env.InCompany(t, co, func(ctx context.Context, db *ent.Client) error {
		c := db.Task.Create().SetTitle("Rückruf").SetNillableContactID(contact).SetNillableAssigneeID(assignee)
		if completed != nil {
			c.SetStatus(task.StatusDone).SetCompletedAt(*completed)
		}
		return c.Exec(ctx)
	})
}

// actAppointment seeds an appointment of owner (or, owner nil, created by creator) at start.
func actAppointment(t *testing.T, env *apitest.Env, co uuid.UUID, owner, creator *uuid.UUID, start time.Time) {
	t.Helper()
	env.InCompany(t, co, func(ctx context.Context, db *ent.Client) error {
		return db.Appointment.Create().SetTitle("Beratung").SetType(appointment.TypeMeeting).SetStartAt(start).
			SetEndAt(start.Add(time.Hour)).SetNillableOwnerID(owner).SetNillableCreatorID(creator).Exec(ctx)
	})
}

// actEmail seeds a message of mailbox mb, sent at at, by creator (nil: synced, nobody's).
func actEmail(t *testing.T, env *apitest.Env, co, mb uuid.UUID, outbound bool, creator *uuid.UUID, at time.Time) {
	t.Helper()
	env.InCompany(t, co, func(ctx context.Context, db *ent.Client) error {
		th, err := db.EmailThread.Create().SetMailboxID(mb).SetSubject("Angebot").SetSubjectKey("angebot").
			SetLastMessageAt(at).SetMessageCount(1).Save(ctx)
		if err != nil {
			return err
		}
		dir, status := email.DirectionInbound, email.StatusReceived
		if outbound {
			dir, status = email.DirectionOutbound, email.StatusSent
		}
		return db.Email.Create().SetThreadID(th.ID).SetMailboxID(mb).SetDirection(dir).SetStatus(status).
			SetMessageID(uuid.NewString() + "@example.com").SetFromAddress("makler@example.com").SetSubject("Angebot").
			SetSentAt(at).SetNillableCreatorID(creator).Exec(ctx)
	})
}

// pipelineBody is the answer of GET /reports/pipeline. The rates are read as float64 here only
// to compare: the fixtures give values a float holds exactly (0.5, 3.5); the JSON digits are
// checked as text where they matter (TestReports_PipelineDigits).
type pipelineBody struct {
	Stages []struct {
		Stage string `json:"stage"`
		Name  string `json:"name"`
		Count int64  `json:"count"`
	} `json:"stages"`
	Sources []struct {
		Source *string `json:"source"`
		Count  int64   `json:"count"`
	} `json:"sources"`
	Leads                   int64    `json:"leads"`
	Converted               int64    `json:"converted"`
	ConversionRate          float64  `json:"conversionRate"`
	AverageDaysToConversion *float64 `json:"averageDaysToConversion"`
}

// stageCounts is stage key → count, in the order listed.
func (p pipelineBody) stageCounts() ([]string, map[string]int64) {
	var keys []string
	m := map[string]int64{}
	for _, s := range p.Stages {
		keys = append(keys, s.Stage)
		m[s.Stage] = s.Count
	}
	return keys, m
}

// sourceCounts is source → count, "" for leads without a source; only non-zero ones.
func (p pipelineBody) sourceCounts() map[string]int64 {
	m := map[string]int64{}
	for _, s := range p.Sources {
		k := ""
		if s.Source != nil {
			k = *s.Source
		}
		if s.Count != 0 {
			m[k] = s.Count
		}
	}
	return m
}

// activityRow is one row of GET /reports/activity.
type activityRow struct {
	UserID           uuid.UUID `json:"userId"`
	ContactsCreated  int64     `json:"contactsCreated"`
	ContractsCreated int64     `json:"contractsCreated"`
	NewAnnualPremium string    `json:"newAnnualPremium"`
	TasksCompleted   int64     `json:"tasksCompleted"`
	Appointments     int64     `json:"appointments"`
	EmailsSent       int64     `json:"emailsSent"`
	LeadsConverted   int64     `json:"leadsConverted"`
}

// activityOf GETs the activity report with key and returns its rows by user.
func activityOf(t *testing.T, env *apitest.Env, key, query string) map[uuid.UUID]activityRow {
	t.Helper()
	body := apitest.Get[struct {
		Data []activityRow `json:"data"`
	}](t, env, key, "/reports/activity?"+query)
	out := map[uuid.UUID]activityRow{}
	for _, r := range body.Data {
		if _, dup := out[r.UserID]; dup {
			t.Fatalf("user %s twice in the report", r.UserID)
		}
		out[r.UserID] = r
	}
	return out
}
