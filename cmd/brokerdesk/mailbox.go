package main

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
)

// mailboxUsage is the mailbox part of the usage text.
const mailboxUsage = `mailbox create --company ID --email ADDR --imap imaps://host:993 --smtp smtp://host:587 --username U [--label L] (--owner USER-ID | --shared)
  mailbox list [--company ID]
  mailbox check MAILBOX-ID              log in to both servers and say what works (exit 1 when one fails)
  mailbox set-password MAILBOX-ID       a paused mailbox resumes
  mailbox update MAILBOX-ID [--imap U] [--smtp U] [--username U] [--label L]
  mailbox delete MAILBOX-ID             with its threads and messages
  (the password: MAILBOX_PASSWORD, else the first line of stdin; never a flag)`

// mailbox handles `brokerdesk mailbox create|list|check|set-password|update|delete`: the company
// mailboxes (the spec lists them, GET /mailboxes, but leaves their configuration to us). The
// password never is a flag (flags end up in shell history and in ps), never printed, never
// logged: it comes from MAILBOX_PASSWORD or the first line of stdin and is sealed with the data
// keys (DATA_KEYS, or the key derived from APP_SECRET as the server derives it).
func (e env) mailbox(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("mailbox: want create, list, check, set-password, update or delete\n  %s", mailboxUsage)
	}
	fs := e.flags("mailbox " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	var companyID, email, imapURL, smtpURL, username, label, owner *string
	var shared *bool
	switch args[0] {
	case "create":
		companyID = fs.String("company", "", "company id")
		email = fs.String("email", "", "the mailbox's address")
		owner = fs.String("owner", "", "user id: the user's personal mailbox")
		shared = fs.Bool("shared", false, "a shared mailbox of the company")
		fallthrough
	case "update":
		imapURL = fs.String("imap", "", "IMAP server: imaps://host:993 or imap://host:143 (STARTTLS)")
		smtpURL = fs.String("smtp", "", "SMTP server: smtp://host:587 (STARTTLS) or smtps://host:465")
		username = fs.String("username", "", "login name on both servers")
		label = fs.String("label", "", "a name to show for the mailbox")
	case "list":
		companyID = fs.String("company", "", "company id (default: every company)")
	}
	pos, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	// one names the mailbox of check, set-password, update and delete.
	one := func() (string, error) {
		if len(pos) != 1 {
			return "", fmt.Errorf("mailbox %s: name one mailbox by id", args[0])
		}
		return pos[0], nil
	}
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	show := func(m operator.Mailbox) func(io.Writer) {
		return func(w io.Writer) { fmt.Fprintln(w, mailboxLine(m)) }
	}

	switch args[0] {
	case "create":
		co, err := parseID("company", *companyID)
		if err != nil {
			return err
		}
		in := operator.NewMailbox{CompanyID: co, Email: *email, Label: *label, IMAPURL: *imapURL, SMTPURL: *smtpURL,
			Username: *username, Shared: *shared}
		if *owner != "" {
			uid, err := parseID("owner", *owner)
			if err != nil {
				return err
			}
			in.OwnerID = &uid
		}
		keys, err := e.dataKeys()
		if err != nil {
			return err
		}
		if in.Password, err = e.mailboxPassword(); err != nil {
			return err
		}
		m, err := svc.CreateMailbox(ctx, keys, in)
		if err != nil {
			return explain(err)
		}
		if err := e.watchMailboxes(ctx, co); err != nil {
			return fmt.Errorf("mailbox %s is created but its sync is not scheduled (brokerdesk mailbox set-password %s schedules it again): %w", m.ID, m.ID, err)
		}
		return e.print(*asJSON, m, show(m))
	case "list":
		var co uuid.UUID
		if *companyID != "" {
			if co, err = parseID("company", *companyID); err != nil {
				return err
			}
		}
		ms, err := svc.ListMailboxes(ctx, co)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, ms, func(w io.Writer) {
			for _, m := range ms {
				show(m)(w)
			}
		})
	case "check":
		ref, err := one()
		if err != nil {
			return err
		}
		keys, err := e.dataKeys()
		if err != nil {
			return err
		}
		c, err := svc.CheckMailbox(ctx, keys, mail.Config{}, ref)
		if err != nil {
			return explain(err)
		}
		answer := func(err error) string {
			if err == nil {
				return "ok"
			}
			return err.Error()
		}
		out := struct {
			Mailbox operator.Mailbox `json:"mailbox"`
			IMAP    string           `json:"imap"`
			SMTP    string           `json:"smtp"`
			OK      bool             `json:"ok"`
		}{c.Mailbox, answer(c.IMAP), answer(c.SMTP), c.OK()}
		if err := e.print(*asJSON, out, func(w io.Writer) {
			show(c.Mailbox)(w)
			fmt.Fprintf(w, "IMAP: %s\nSMTP: %s\n", out.IMAP, out.SMTP)
		}); err != nil {
			return err
		}
		if !c.OK() { // a script (or a monitor) sees the failure in the exit status
			return fmt.Errorf("mailbox check: %s does not work", failing(c))
		}
		return nil
	case "set-password":
		ref, err := one()
		if err != nil {
			return err
		}
		keys, err := e.dataKeys()
		if err != nil {
			return err
		}
		password, err := e.mailboxPassword()
		if err != nil {
			return err
		}
		m, err := svc.SetMailboxPassword(ctx, keys, ref, password)
		if err != nil {
			return explain(err)
		}
		if err := e.watchMailboxes(ctx, m.CompanyID); err != nil { // idempotent: repairs a lost schedule
			return fmt.Errorf("password set, but the sync is not scheduled: %w", err)
		}
		return e.print(*asJSON, m, func(w io.Writer) {
			show(m)(w)
			fmt.Fprintln(w, "password set; the mailbox syncs again (brokerdesk mailbox check says whether the servers take it)")
		})
	case "update":
		ref, err := one()
		if err != nil {
			return err
		}
		var ch operator.MailboxChange
		fs.Visit(func(f *flag.Flag) {
			v := f.Value.String()
			switch f.Name {
			case "imap":
				ch.IMAPURL = &v
			case "smtp":
				ch.SMTPURL = &v
			case "username":
				ch.Username = &v
			case "label":
				ch.Label = &v
			}
		})
		m, err := svc.UpdateMailbox(ctx, ref, ch)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, m, show(m))
	case "delete":
		ref, err := one()
		if err != nil {
			return err
		}
		m, err := svc.DeleteMailbox(ctx, ref)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, map[string]string{"deleted": m.ID.String()}, func(w io.Writer) {
			fmt.Fprintf(w, "deleted mailbox %s (%s) with its threads and messages\n", m.ID, m.Email)
		})
	}
	return fmt.Errorf("mailbox: unknown subcommand %q", args[0])
}

// watchMailboxes asks for a visit of the mailboxes due now (emails.Watch, idempotent), so a new
// or resumed mailbox syncs at once rather than at the next period, on the owner's connection,
// which reaches river's tables.
func (e env) watchMailboxes(ctx context.Context, company uuid.UUID) error {
	db, err := sql.Open("pgx", e.getenv("DATABASE_URL"))
	if err != nil {
		return err
	}
	defer db.Close()
	return emails.Watch(ctx, db, company)
}

// mailboxLine is one mailbox in plain text: never the password.
func mailboxLine(m operator.Mailbox) string {
	whose := "shared"
	if !m.Shared {
		whose = "owner -"
		if m.OwnerID != nil {
			whose = "owner " + m.OwnerID.String()
		}
	}
	line := fmt.Sprintf("%s  %s  company %s  %s  label %q  imap %s  smtp %s  user %s  sync %s",
		m.ID, m.Email, m.CompanyID, whose, m.Label, m.IMAPURL, m.SMTPURL, m.Username, m.SyncState)
	if m.SyncError != "" {
		line += fmt.Sprintf(" (%s)", m.SyncError)
	}
	return line
}

// failing names the servers that refused.
func failing(c operator.MailboxCheck) string {
	switch {
	case c.IMAP != nil && c.SMTP != nil:
		return "IMAP and SMTP"
	case c.IMAP != nil:
		return "IMAP"
	}
	return "SMTP"
}

// mailboxPassword is MAILBOX_PASSWORD, else the first line of stdin (its line end cut, spaces
// kept: they may belong to the password).
func (e env) mailboxPassword() (string, error) {
	if p := e.getenv("MAILBOX_PASSWORD"); p != "" {
		return p, nil
	}
	if f, ok := e.stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprint(e.stderr, "mailbox password (shown as typed; pipe it or set MAILBOX_PASSWORD to avoid that): ")
		}
	}
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("read the password from stdin: %w", err)
	}
	p := strings.TrimRight(line, "\r\n")
	if p == "" {
		return "", fmt.Errorf("no password: set MAILBOX_PASSWORD or give it as the first line of stdin")
	}
	return p, nil
}

// dataKeys are the keys that seal mailbox passwords: DATA_KEYS, else the key derived from
// APP_SECRET, exactly as the server reads them (app.LoadConfig), so it opens what this seals.
func (e env) dataKeys() (*datakeys.Keyring, error) {
	secret := []byte(e.getenv("APP_SECRET"))
	if e.getenv("DATA_KEYS") == "" && len(secret) == 0 {
		return nil, fmt.Errorf("DATA_KEYS (or APP_SECRET, from which the default key derives) is not set: the server must open the password this seals")
	}
	keys, err := datakeys.FromConfig(e.getenv("DATA_KEYS"), secret)
	if err != nil {
		return nil, fmt.Errorf("DATA_KEYS: %w", err)
	}
	return keys, nil
}
