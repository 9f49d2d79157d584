package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The demo mailbox of `brokerdesk dev` (issue 21): a shared mailbox of the demo company on an
// embedded loopback mail server (SMTP in, IMAP out, in the dev process), and a customer account
// on the same server, so that POST /emails, the thread list and a reply work on the README's
// two commands alone, and a desktop mail client can join in.
const (
	demoMailbox      = "team@demo-makler.test"
	demoMailboxLabel = "Demo-Team"
	demoCustomerMail = "kunde@example.test"
	// demoPoints is what dev keeps the demo company's balance at (topped up on every run).
	demoPoints = 1000
)

// demoMailFeatures are the features the demo company needs for the e-mail and signing areas
// (signing links and codes are mailed); dev adds them to a demo company seeded by an earlier
// version.
var demoMailFeatures = []string{"emails", "marketing", "digital_signature", "advice"}

// devMail is the running demo mail server and what dev prints about it.
type devMail struct {
	srv       *mailserver.Server
	done      chan struct{} // closed by Close: ends echoCustomerMail
	MailboxID string
	Points    int64
}

// startDevMail starts the loopback mail server with the demo accounts (passwords from k, made
// on the first run and kept in the keys file) and points the demo mailbox at it: created on the
// first run, moved to this run's ports and given the password again on later ones (which also
// resumes it if a sync paused it). It tops the points up and adds the e-mail features. The
// caller closes srv.
func startDevMail(ctx context.Context, ownerURL string, keys *datakeys.Keyring, k *demoKeys, keysFile string) (*devMail, error) {
	changed := false
	for _, pw := range []*string{&k.MailPassword, &k.CustomerMailPassword} {
		if *pw == "" {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			*pw, changed = "mail-"+hex.EncodeToString(b), true
		}
	}
	if changed {
		if err := writeKeys(keysFile, *k); err != nil {
			return nil, err
		}
	}

	// The messages live in memory: they go when dev stops (what the sync stored stays).
	srv, err := mailserver.Start(mailserver.Options{})
	if err != nil {
		return nil, err
	}
	d := &devMail{srv: srv, done: make(chan struct{})}
	if err := d.seed(ctx, ownerURL, keys, k); err != nil {
		_ = srv.Close()
		return nil, err
	}
	return d, nil
}

func (d *devMail) seed(ctx context.Context, ownerURL string, keys *datakeys.Keyring, k *demoKeys) error {
	if err := d.srv.AddUser(demoMailbox, k.MailPassword); err != nil {
		return err
	}
	if err := d.srv.AddUser(demoCustomerMail, k.CustomerMailPassword); err != nil {
		return err
	}
	db, err := sql.Open("pgx", ownerURL)
	if err != nil {
		return err
	}
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(db)))
	defer client.Close()
	svc := operator.New(client)

	if err := demoCompanyFeatures(ctx, svc, k); err != nil {
		return err
	}
	boxes, err := svc.ListMailboxes(ctx, k.CompanyID)
	if err != nil {
		return explain(err)
	}
	imapURL, smtpURL := d.srv.IMAPURL(), d.srv.SMTPURL()
	var box operator.Mailbox
	if i := slices.IndexFunc(boxes, func(m operator.Mailbox) bool { return m.Email == demoMailbox }); i >= 0 {
		box = boxes[i]
		// this run's ports; the sync starts over on the new server (UpdateMailbox)
		if box, err = svc.UpdateMailbox(ctx, box.ID.String(), operator.MailboxChange{IMAPURL: &imapURL, SMTPURL: &smtpURL}); err != nil {
			return explain(err)
		}
		if box, err = svc.SetMailboxPassword(ctx, keys, box.ID.String(), k.MailPassword); err != nil {
			return explain(err)
		}
	} else {
		box, err = svc.CreateMailbox(ctx, keys, operator.NewMailbox{CompanyID: k.CompanyID, Email: demoMailbox,
			Label: demoMailboxLabel, IMAPURL: imapURL, SMTPURL: smtpURL, Username: demoMailbox,
			Password: k.MailPassword, Shared: true})
		if err != nil {
			return explain(err)
		}
	}
	d.MailboxID = box.ID.String()
	if err := emails.Watch(ctx, db, k.CompanyID); err != nil { // the periodic sync (idempotent)
		return err
	}

	if d.Points, err = svc.PointsBalance(ctx, k.CompanyID); err != nil {
		return err
	}
	if d.Points < demoPoints {
		if d.Points, err = svc.GrantPoints(ctx, k.CompanyID, demoPoints-d.Points, "dev: demo balance"); err != nil {
			return explain(err)
		}
	}
	return nil
}

// demoCompanyFeatures adds the e-mail features to the demo company when it lacks them (a demo
// company seeded before issue 21).
func demoCompanyFeatures(ctx context.Context, svc *operator.Service, k *demoKeys) error {
	cs, err := svc.ListCompanies(ctx)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.ID != k.CompanyID {
			continue
		}
		want := slices.Clone(c.Features)
		for _, f := range demoMailFeatures {
			if !slices.Contains(want, f) {
				want = append(want, f)
			}
		}
		if len(want) == len(c.Features) {
			return nil
		}
		_, err := svc.SetFeatures(ctx, c.ID, want)
		return explain(err)
	}
	return fmt.Errorf("demo company %s not found", k.CompanyID)
}

// Close stops the mail server.
func (d *devMail) Close() error {
	close(d.done)
	return d.srv.Close()
}

// echoCustomerMail prints every message the demo customer receives (subject, and the lines
// with a link or a code: a signing link, a one-time code) to w until Close, so the README's
// signing flow works from the terminal without a mail client.
func (d *devMail) echoCustomerMail(w io.Writer) {
	seen := 0
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-d.done:
			return
		case <-t.C:
		}
		got := d.srv.Received()
		for _, e := range got[min(seen, len(got)):] {
			if !slices.Contains(e.To, demoCustomerMail) {
				continue
			}
			m := mail.Parse(e.Data)
			fmt.Fprintf(w, "mail to %s: %q\n", demoCustomerMail, m.Subject)
			for _, line := range strings.Split(m.Text, "\n") {
				if l := strings.TrimSpace(line); strings.Contains(l, "http") || strings.Contains(strings.ToLower(l), "code:") {
					fmt.Fprintf(w, "    %s\n", l)
				}
			}
		}
		seen = len(got)
	}
}

// print writes how to use the demo mailbox, from the API and from a desktop mail client.
func (d *devMail) print(w io.Writer, k demoKeys, api string) {
	fmt.Fprintf(w, "  demo mailbox     %s (shared, %s), %d points for sending\n", demoMailbox, d.MailboxID, d.Points)
	fmt.Fprintf(w, "  mail server      in this process, loopback only, no encryption; its mail lives in memory until dev stops\n")
	fmt.Fprintf(w, "                   IMAP %s   SMTP %s   (new ports on every run)\n", d.srv.IMAPAddr(), d.srv.SMTPAddr())
	fmt.Fprintf(w, "    %-22s password %s   (the demo company's mailbox)\n", demoMailbox, k.MailPassword)
	fmt.Fprintf(w, "    %-22s password %s   (a customer: mail the team from here, read its answers)\n", demoCustomerMail, k.CustomerMailPassword)
	fmt.Fprintf(w, "  Thunderbird: add a mail account by hand (\"Configure manually\"): incoming IMAP and outgoing SMTP\n")
	fmt.Fprintf(w, "  on 127.0.0.1 with the ports above, connection security \"None\", authentication \"Normal\n")
	fmt.Fprintf(w, "  password\", the address as user name. Only this machine reaches the server.\n\n")
	fmt.Fprintf(w, "  curl -s %s/mailboxes -H \"Authorization: Bearer %s\"\n", api, k.SecretLive)
	fmt.Fprintf(w, "  mail to %s is echoed here (subject, links, codes): the signing flow needs no mail client\n\n", demoCustomerMail)
	go d.echoCustomerMail(w)
}
