package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/devdb"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/apikey"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The demo data dev seeds once.
const (
	demoCompany  = "Demo Maklerbüro GmbH"
	demoEmail    = "anna.admin@demo.example"
	devDatabase  = "brokerdesk"
	devListen    = "127.0.0.1:8080"
	devAppPasswd = "brokerdesk_dev" // the app role's password on a dev server (a container wants one)
)

var demoFeatures = []string{"leads", "customer_portal", "emails", "marketing", "digital_signature", "advice"}

// demoKeys is DATA/demo-keys.json: keys are stored only hashed, so dev keeps the plaintext of
// its demo keys here (mode 0600, dev only) to print them again on later runs.
type demoKeys struct {
	CompanyID       uuid.UUID `json:"companyId"`
	UserID          uuid.UUID `json:"userId"`
	Email           string    `json:"email"`
	SecretLive      string    `json:"secretLive"`
	SecretTest      string    `json:"secretTest"`
	PublishableLive string    `json:"publishableLive"`
	// Password is the demo user's, for the OAuth sign-in form (argon2id-hashed in the database).
	Password string `json:"password"`
	// MailPassword and CustomerMailPassword are the demo mailbox's and the demo customer's on
	// the loopback mail server (devmail.go), for a desktop mail client.
	MailPassword         string `json:"mailPassword,omitempty"`
	CustomerMailPassword string `json:"customerMailPassword,omitempty"`
	// PortalContactID is the demo customer of the customer portal (devportal.go).
	PortalContactID uuid.UUID `json:"portalContactId,omitzero"`
}

// dev starts a private PostgreSQL cluster (or uses DATABASE_URL), migrates, seeds a demo
// company and serves until ctx ends; then it stops the server and the cluster.
func (e env) dev(ctx context.Context, args []string) (err error) {
	fs := e.flags("dev")
	dataFlag := fs.String("data", ".data", "directory for the cluster, the demo keys and the app secret")
	noServe := fs.Bool("no-serve", false, "set up, seed and print the keys, then stop the cluster and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dataDir, err := filepath.Abs(*dataFlag)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	secret, err := devSecret(e.getenv, filepath.Join(dataDir, "app-secret"))
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	sealKey, sealCert, err := devSeal(e.getenv, dataDir)
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}

	// getenv is the environment with dev's defaults; ownerURL is filled in once the database runs.
	ownerURL := e.getenv("DATABASE_URL")
	external := ownerURL != ""
	// WEBHOOK_ALLOW_INSECURE: webhook endpoints on this machine (http://localhost:…) for trying
	// deliveries out. MAIL_SYNC_EVERY: a reply from the mail client shows up in the thread soon.
	defaults := map[string]string{"LISTEN_ADDR": devListen, "LOG_FORMAT": "console", "APP_SECRET": secret,
		"WEBHOOK_ALLOW_INSECURE": "true", "DATA_KEYS": datakeys.DemoKeys, "MAIL_SYNC_EVERY": "15s",
		"SIGNING_KEY_FILE": sealKey, "SIGNING_CERT_FILE": sealCert}
	if !external {
		defaults["APP_DB_PASSWORD"] = devAppPasswd
	}
	getenv := func(k string) string {
		switch {
		case k == "DATABASE_URL":
			return ownerURL
		case k == "APP_DATABASE_URL" && !external:
			return "" // derived from our own server's URL
		case e.getenv(k) != "":
			return e.getenv(k)
		}
		return defaults[k]
	}
	cfg, err := app.LoadConfig(getenv)
	if err != nil {
		return err
	}
	log := e.logger(cfg)

	var source string
	if external {
		source = "DATABASE_URL"
		if u, err := url.Parse(ownerURL); err == nil {
			source += " (" + u.Host + u.Path + ")"
		}
	} else {
		db, err := devdb.Start(ctx, dataDir, log)
		if err != nil {
			return fmt.Errorf("dev: %w", err)
		}
		defer func() {
			if serr := db.Stop(); serr != nil {
				err = errors.Join(err, serr)
			} else {
				log.Info().Msg("PostgreSQL stopped")
			}
		}()
		source = db.Describe
		if ownerURL, err = createDatabase(ctx, db.AdminURL, devDatabase); err != nil {
			return fmt.Errorf("dev: %w", err)
		}
	}
	if cfg, err = app.LoadConfig(getenv); err != nil {
		return err
	}
	applied, err := migrateURL(ctx, cfg.DatabaseURL, cfg.AppDBPassword)
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	if len(applied) > 0 {
		log.Info().Strs("files", applied).Msg("migrations applied")
	} else {
		log.Info().Msg("migrations up to date")
	}

	keys, seeded, err := seedDemo(ctx, cfg.DatabaseURL, filepath.Join(dataDir, "demo-keys.json"), log)
	if err != nil {
		return fmt.Errorf("dev: seed: %w", err)
	}
	mail, err := startDevMail(ctx, cfg.DatabaseURL, cfg.DataKeys, &keys, filepath.Join(dataDir, "demo-keys.json"))
	if err != nil {
		return fmt.Errorf("dev: demo mailbox: %w", err)
	}
	defer mail.Close() // after the server (deferred later, closed first)

	srv, err := app.NewServer(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer srv.Close()
	// The portal's demo customer is made through the API, in process: the server exists, it
	// does not listen yet.
	portal, err := seedPortal(ctx, srv, cfg.DatabaseURL, filepath.Join(dataDir, "demo-keys.json"), &keys)
	if err != nil {
		return fmt.Errorf("dev: portal demo: %w", err)
	}
	if *noServe {
		e.printDev(devBlock{URL: "http://" + listenURLHost(cfg.ListenAddr), Source: source, Keys: keys, Seeded: seeded,
			KeysFile: filepath.Join(*dataFlag, "demo-keys.json"), NoServe: true, OwnDB: !external, Mail: mail, SealCert: sealCert,
			Portal: portal})
		return nil
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen: %w (set LISTEN_ADDR to another address)", err)
	}
	e.printDev(devBlock{URL: "http://" + listenURLHost(ln.Addr().String()), Source: source, Keys: keys, Seeded: seeded,
		KeysFile: filepath.Join(*dataFlag, "demo-keys.json"), OwnDB: !external, Mail: mail, SealCert: sealCert, Portal: portal})
	return srv.ServeListener(ctx, ln, cfg.ShutdownTimeout)
}

// listenURLHost turns a listen address into one a browser or curl on this machine reaches.
func listenURLHost(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// devSecret is APP_SECRET, else the secret in file, made on the first run, so that cursors
// survive a restart of dev.
func devSecret(getenv func(string) string, file string) (string, error) {
	if s := getenv("APP_SECRET"); s != "" {
		return s, nil
	}
	if b, err := os.ReadFile(file); err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		return strings.TrimSpace(string(b)), nil
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	s := hex.EncodeToString(b)
	return s, os.WriteFile(file, []byte(s+"\n"), 0o600)
}

// createDatabase creates database name on the server of adminURL unless it exists and returns
// its URL.
func createDatabase(ctx context.Context, adminURL, name string) (string, error) {
	db, err := sql.Open("pgx", adminURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("connect to the dev server: %w", err)
	}
	if !exists {
		if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			return "", fmt.Errorf("create database %s: %w", name, err)
		}
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// seedDemo makes sure the demo company, its admin and three keys exist, once: keys from an
// earlier run are reused while the database still knows them. It reports whether it issued
// new keys.
func seedDemo(ctx context.Context, ownerURL, keysFile string, log zerolog.Logger) (demoKeys, bool, error) {
	db, err := sql.Open("pgx", ownerURL)
	if err != nil {
		return demoKeys{}, false, err
	}
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(db)))
	defer client.Close()
	svc := operator.New(client)

	companies, err := svc.ListCompanies(ctx)
	if err != nil {
		return demoKeys{}, false, err
	}
	var co *operator.Company
	for i := range companies {
		if companies[i].Name == demoCompany {
			co = &companies[i]
			break
		}
	}
	var saved demoKeys
	if b, err := os.ReadFile(keysFile); err == nil {
		if err := json.Unmarshal(b, &saved); err != nil {
			log.Warn().Err(err).Str("file", keysFile).Msg("unreadable demo keys file: issuing new keys")
		}
	}
	if co != nil && saved.CompanyID == co.ID {
		ok, err := keysActive(ctx, svc, co.ID, saved.SecretLive, saved.SecretTest, saved.PublishableLive)
		if err != nil {
			return demoKeys{}, false, err
		}
		if ok && saved.Password != "" {
			return saved, false, nil
		}
		if ok { // a keys file of a version without the password: give her one now
			if err := demoPassword(ctx, svc, &saved); err != nil {
				return saved, false, err
			}
			return saved, false, writeKeys(keysFile, saved)
		}
	}

	var k demoKeys
	if co == nil {
		c, err := svc.CreateCompany(ctx, demoCompany, demoFeatures)
		if err != nil {
			return k, false, explain(err)
		}
		co = &c
	} else {
		log.Warn().Str("company", co.ID.String()).Msg("the demo company exists but its keys are unknown here: issuing new demo keys")
	}
	k.CompanyID, k.Email = co.ID, demoEmail
	if k.UserID, err = demoUser(ctx, client, svc, co.ID); err != nil {
		return k, false, err
	}
	if err := demoPassword(ctx, svc, &k); err != nil {
		return k, false, err
	}
	issue := []struct {
		in  operator.NewKeyInput
		out *string
	}{
		{operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvLive, Name: "dev: live secret key"}, &k.SecretLive},
		{operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvTest, Name: "dev: sandbox secret key"}, &k.SecretTest},
		{operator.NewKeyInput{Kind: tenancy.KindPublishable, Env: tenancy.EnvLive, UserID: &k.UserID,
			AllowedDomains: []string{"localhost"}, Name: "dev: website form"}, &k.PublishableLive},
	}
	for _, it := range issue {
		it.in.CompanyID = co.ID
		key, err := svc.CreateKey(ctx, it.in)
		if err != nil {
			return k, false, explain(err)
		}
		*it.out = key.Secret
	}
	return k, true, writeKeys(keysFile, k)
}

// writeKeys saves the demo keys file (mode 0600).
func writeKeys(keysFile string, k demoKeys) error {
	b, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(keysFile, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Chmod(keysFile, 0o600) // WriteFile keeps the mode of an existing file
}

// demoPassword gives the demo user a new random password (the OAuth sign-in form's) and keeps
// it in k, to be printed on every run like the keys.
func demoPassword(ctx context.Context, svc *operator.Service, k *demoKeys) error {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	k.Password = "demo-" + hex.EncodeToString(b)
	if err := svc.SetPassword(ctx, k.CompanyID, k.Email, k.Password); err != nil {
		return explain(err)
	}
	return nil
}

// keysActive reports whether every key is still an active key of the company or its sandbox.
func keysActive(ctx context.Context, svc *operator.Service, companyID uuid.UUID, secrets ...string) (bool, error) {
	keys, err := svc.ListKeys(ctx, companyID)
	if err != nil {
		return false, err
	}
	for _, s := range secrets {
		found := false
		for _, k := range keys {
			if s != "" && k.Status == string(apikey.StatusActive) && strings.HasPrefix(s, k.Prefix) {
				found = true
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}

// demoUser returns the demo admin of the company, creating it when missing.
func demoUser(ctx context.Context, client *ent.Client, svc *operator.Service, companyID uuid.UUID) (uuid.UUID, error) {
	u, err := svc.CreateUser(ctx, operator.NewUser{CompanyID: companyID, Email: demoEmail, FirstName: "Anna",
		LastName: "Admin", Role: "admin"})
	if err == nil {
		return u.ID, nil
	}
	var e *errs.E
	if !errors.As(err, &e) || e.Code != "email_taken" {
		return uuid.Nil, explain(err)
	}
	// She exists from an earlier seed. Operator work: the operator role sees every company,
	// and this reads one user of the company dev itself created.
	octx := tenancy.WithOperator(ctx)
	tx, err := client.Tx(octx)
	if err != nil {
		return uuid.Nil, err
	}
	defer tx.Rollback()
	found, err := tx.User.Query().Where(user.CompanyID(companyID), user.Email(demoEmail)).Only(octx)
	if err != nil {
		return uuid.Nil, fmt.Errorf("demo user: %w", err)
	}
	return found.ID, nil
}

// devBlock is what dev prints once the server listens.
type devBlock struct {
	URL, Source, KeysFile string
	Keys                  demoKeys
	Seeded, NoServe       bool
	OwnDB                 bool     // dev started PostgreSQL and stops it on exit
	Mail                  *devMail // the demo mailbox and its loopback mail server
	SealCert              string   // the certificate signed PDFs are sealed with
	Portal                devPortal
}

func (e env) printDev(b devBlock) {
	w := e.stdout
	api := b.URL + app.V1Prefix
	seeded := "from an earlier run, reused"
	if b.Seeded {
		seeded = "seeded now"
	}
	fmt.Fprintf(w, "\nBrokerDesk dev\n\n")
	fmt.Fprintf(w, "  URL              %s\n", b.URL)
	fmt.Fprintf(w, "  PostgreSQL       %s\n", b.Source)
	fmt.Fprintf(w, "  demo company     %s (%s), features %s: %s\n", demoCompany, b.Keys.CompanyID, strings.Join(demoFeatures, ","), seeded)
	fmt.Fprintf(w, "  user             %s (admin, %s)\n", b.Keys.Email, b.Keys.UserID)
	fmt.Fprintf(w, "  password         %s   (sign-in of partner apps: %s/oauth/authorize)\n\n", b.Keys.Password, b.URL)
	fmt.Fprintf(w, "  secret key, live, all scopes   %s\n", b.Keys.SecretLive)
	fmt.Fprintf(w, "  secret key, sandbox            %s\n", b.Keys.SecretTest)
	fmt.Fprintf(w, "  publishable key (localhost)    %s\n\n", b.Keys.PublishableLive)
	fmt.Fprintf(w, "  curl -s %s/me -H \"Authorization: Bearer %s\"\n", api, b.Keys.SecretLive)
	fmt.Fprintf(w, "  curl -s %s/company -H \"Authorization: Bearer %s\"\n", api, b.Keys.SecretLive)
	fmt.Fprintf(w, "  curl -s %s/users -H \"Authorization: Bearer %s\"\n", api, b.Keys.SecretLive)
	fmt.Fprintf(w, "  curl -s %s/me -H \"Authorization: Bearer %s\"   # sandbox\n\n", api, b.Keys.SecretTest)
	if b.Mail != nil && !b.NoServe { // the mail server stops with --no-serve
		b.Mail.print(w, b.Keys, api)
	}
	b.Portal.print(w, b.URL, b.Keys)
	fmt.Fprintf(w, "  seal certificate of signed PDFs   %s\n", b.SealCert)
	fmt.Fprintf(w, "  (self-signed unless SIGNING_CERT_FILE is set: PDF readers call the signature valid but its signer untrusted)\n\n")
	fmt.Fprintf(w, "  The keys are kept in %s (dev only) and printed on every run.\n", b.KeysFile)
	switch {
	case b.NoServe && b.OwnDB:
		fmt.Fprintf(w, "  --no-serve: not serving; PostgreSQL stops now.\n\n")
	case b.NoServe:
		fmt.Fprintf(w, "  --no-serve: not serving.\n\n")
	case b.OwnDB:
		fmt.Fprintf(w, "  Ctrl-C stops the server, then PostgreSQL.\n\n")
	default:
		fmt.Fprintf(w, "  Ctrl-C stops the server.\n\n")
	}
}
