package mail

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-message/charset"
)

// imapSchemes are the URL schemes of DialIMAP with their default ports.
var imapSchemes = map[string]int{"imap": 143, "imaps": 993}

// IMAP is a logged-in IMAP connection. It is not safe for concurrent use: one sync at a time per
// mailbox.
type IMAP struct {
	c       *imapclient.Client
	conn    net.Conn // the TCP connection below TLS: deadlines are set on it
	timeout time.Duration
	caps    imap.CapSet

	mu       sync.Mutex
	watchdog *time.Timer
	selected string

	// uids are the UIDs above uidsAfter found by the last UID SEARCH of this selection.
	uids      []imap.UID
	uidsAfter uint32
}

// DialIMAP connects to srv and logs in. imap:// uses STARTTLS (required unless the host is
// loopback, used there when offered), imaps:// implicit TLS. A refused login wraps ErrAuth.
func DialIMAP(ctx context.Context, cfg Config, srv Server) (*IMAP, error) {
	cfg = cfg.WithDefaults()
	ep, err := parseEndpoint(srv.URL, imapSchemes)
	if err != nil {
		return nil, err
	}
	tlsCfg := cfg.tlsConfig(ep.host)
	opts := &imapclient.Options{
		TLSConfig:   tlsCfg,
		WordDecoder: &mime.WordDecoder{CharsetReader: charset.Reader},
	}

	useStartTLS := !ep.implicitTLS() && !plaintextAllowed(ep.host)
	if !ep.implicitTLS() && plaintextAllowed(ep.host) {
		// Loopback: STARTTLS when offered. The client starts TLS only right after the greeting,
		// so a first connection asks for the capabilities.
		m, err := connectIMAP(ctx, cfg, ep, opts, false)
		if err != nil {
			return nil, err
		}
		caps, err := m.capabilities()
		if err != nil {
			m.c.Close()
			return nil, fmt.Errorf("mail: IMAP CAPABILITY: %w", err)
		}
		if !caps.Has(imap.CapStartTLS) {
			return m.login(ctx, srv)
		}
		_ = m.c.Logout().Wait()
		m.c.Close()
		useStartTLS = true
	}
	m, err := connectIMAP(ctx, cfg, ep, opts, useStartTLS)
	if err != nil {
		return nil, err
	}
	return m.login(ctx, srv)
}

// connectIMAP dials and secures one connection (implicit TLS, STARTTLS or none).
func connectIMAP(ctx context.Context, cfg Config, ep endpoint, opts *imapclient.Options, startTLS bool) (*IMAP, error) {
	conn, err := cfg.dial(ctx, ep.addr)
	if err != nil {
		return nil, fmt.Errorf("mail: connect to %s: %w", ep.addr, err)
	}
	// imapclient sets read deadlines of its own (30 s per response), so a timeout or a
	// cancelled ctx closes the connection instead: a session that timed out is unusable anyway.
	m := &IMAP{conn: conn, timeout: cfg.Timeout}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	watchdog := time.AfterFunc(cfg.Timeout, func() { conn.Close() })
	defer watchdog.Stop()
	switch {
	case ep.implicitTLS():
		tc := tls.Client(conn, opts.TLSConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("mail: TLS with %s: %w", ep.addr, err)
		}
		m.c = imapclient.New(tc, opts)
	case startTLS:
		c, err := imapclient.NewStartTLS(conn, opts)
		if err != nil {
			conn.Close()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("mail: %s: %w", ep.addr, ctx.Err())
			}
			var ie *imap.Error
			if errors.As(err, &ie) {
				return nil, fmt.Errorf("%w: %s refused STARTTLS (%v); a password is never sent in plaintext to a non-loopback host (use imaps://)", ErrInsecure, ep.addr, err)
			}
			return nil, fmt.Errorf("mail: STARTTLS with %s: %w", ep.addr, err)
		}
		m.c = c
	default:
		m.c = imapclient.New(conn, opts)
	}
	if err := m.c.WaitGreeting(); err != nil {
		m.c.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("mail: %s: %w", ep.addr, ctx.Err())
		}
		if !watchdog.Stop() {
			return nil, fmt.Errorf("mail: IMAP greeting of %s: no answer within %v", ep.addr, cfg.Timeout)
		}
		return nil, fmt.Errorf("mail: IMAP greeting of %s: %w", ep.addr, err)
	}
	return m, nil
}

// capabilities asks for the capability list within the timeout.
func (m *IMAP) capabilities() (imap.CapSet, error) {
	var caps imap.CapSet
	err := m.do(func() error {
		var err error
		caps, err = m.c.Capability().Wait()
		return err
	})
	return caps, err
}

// login logs in and reads the capabilities of the authenticated state.
func (m *IMAP) login(ctx context.Context, srv Server) (*IMAP, error) {
	stop := context.AfterFunc(ctx, func() { m.conn.Close() })
	defer stop()
	err := m.do(func() error { return m.c.Login(srv.Username, srv.Password).Wait() })
	if err != nil {
		m.c.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("mail: IMAP login: %w", ctx.Err())
		}
		var ie *imap.Error
		if errors.As(err, &ie) && ie.Type == imap.StatusResponseTypeNo && ie.Code != imap.ResponseCodeUnavailable {
			return nil, fmt.Errorf("%w: %w", ErrAuth, err)
		}
		return nil, fmt.Errorf("mail: IMAP login: %w", err)
	}
	// The capabilities change after login (RFC 3501 §6.2.3); servers usually send them with
	// the OK, else ask.
	caps, err := m.capabilities()
	if err != nil {
		m.c.Close()
		return nil, fmt.Errorf("mail: IMAP CAPABILITY: %w", err)
	}
	m.caps = caps
	if caps.Has(imap.CapCondStore) {
		// ENABLE is not required for CONDSTORE (SELECT (CONDSTORE) enables it) but harmless.
		_ = m.do(func() error { _, err := m.c.Enable(imap.CapCondStore).Wait(); return err })
	}
	return m, nil
}

// do runs one command within the timeout: when it passes, the connection is closed (imapclient
// manages the read deadlines itself) and the command fails.
func (m *IMAP) do(f func() error) error {
	m.mu.Lock()
	m.watchdog = time.AfterFunc(m.timeout, func() { m.conn.Close() })
	m.mu.Unlock()
	err := f()
	m.mu.Lock()
	fired := !m.watchdog.Stop()
	m.watchdog = nil
	m.mu.Unlock()
	if err != nil && fired {
		return fmt.Errorf("no answer within %v: %w", m.timeout, err)
	}
	return err
}

// extend gives the running command another timeout (a long fetch that is making progress).
func (m *IMAP) extend() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.watchdog != nil {
		m.watchdog.Reset(m.timeout)
	}
}

// Close logs out and closes the connection.
func (m *IMAP) Close() error {
	if m == nil || m.c == nil {
		return nil
	}
	t := time.AfterFunc(5*time.Second, func() { m.conn.Close() })
	defer t.Stop()
	_ = m.c.Logout().Wait()
	return m.c.Close()
}

// SentFolder is the mailbox the server marks \Sent (RFC 6154 SPECIAL-USE), else "Sent", created
// when missing.
func (m *IMAP) SentFolder() (string, error) {
	var list []*imap.ListData
	err := m.do(func() error {
		var opts *imap.ListOptions
		if m.caps.Has(imap.CapSpecialUse) {
			opts = &imap.ListOptions{ReturnSpecialUse: true}
		}
		var err error
		list, err = m.c.List("", "*", opts).Collect()
		return err
	})
	if err != nil {
		return "", fmt.Errorf("mail: IMAP LIST: %w", err)
	}
	for _, l := range list {
		for _, a := range l.Attrs {
			if strings.EqualFold(string(a), string(imap.MailboxAttrSent)) {
				return l.Mailbox, nil
			}
		}
	}
	for _, l := range list {
		if strings.EqualFold(l.Mailbox, "Sent") {
			return l.Mailbox, nil
		}
	}
	err = m.do(func() error {
		var opts *imap.CreateOptions
		if m.caps.Has(imap.CapCreateSpecialUse) {
			opts = &imap.CreateOptions{SpecialUse: []imap.MailboxAttr{imap.MailboxAttrSent}}
		}
		return m.c.Create("Sent", opts).Wait()
	})
	if err != nil {
		var ie *imap.Error
		if errors.As(err, &ie) && ie.Code == imap.ResponseCodeAlreadyExists {
			return "Sent", nil
		}
		return "", fmt.Errorf("mail: IMAP CREATE Sent: %w", err)
	}
	return "Sent", nil
}

// Append stores raw in folder, \Seen when seen.
func (m *IMAP) Append(folder string, raw []byte, seen bool) error {
	opts := &imap.AppendOptions{Time: time.Now()}
	if seen {
		opts.Flags = []imap.Flag{imap.FlagSeen}
	}
	err := m.do(func() error {
		cmd := m.c.Append(folder, int64(len(raw)), opts)
		if _, err := cmd.Write(raw); err != nil {
			_ = cmd.Close()
			return err
		}
		if err := cmd.Close(); err != nil {
			return err
		}
		_, err := cmd.Wait()
		return err
	})
	if err != nil {
		return fmt.Errorf("mail: IMAP APPEND to %q: %w", folder, err)
	}
	return nil
}

// FolderStatus is what SELECT says of a folder.
type FolderStatus struct {
	UIDValidity   uint32
	UIDNext       uint32
	HighestModSeq uint64 // 0 when the server lacks CONDSTORE
	Messages      uint32
}

// Select opens folder (read-only: a sync never changes flags), with CONDSTORE when offered.
func (m *IMAP) Select(folder string) (FolderStatus, error) {
	var data *imap.SelectData
	err := m.do(func() error {
		var err error
		data, err = m.c.Select(folder, &imap.SelectOptions{
			ReadOnly:  true,
			CondStore: m.caps.Has(imap.CapCondStore),
		}).Wait()
		return err
	})
	if err != nil {
		return FolderStatus{}, fmt.Errorf("mail: IMAP SELECT %q: %w", folder, err)
	}
	m.selected = folder
	m.uids = nil
	return FolderStatus{
		UIDValidity:   data.UIDValidity,
		UIDNext:       uint32(data.UIDNext),
		HighestModSeq: data.HighestModSeq,
		Messages:      data.NumMessages,
	}, nil
}

// Fetched is one message of FetchAfter.
type Fetched struct {
	UID uint32
	Raw []byte
}

// FetchAfter returns the messages of the selected folder with a UID above afterUID, ascending, at
// most max of them (one batch of a sync: the caller stores them and asks again after the last).
// UID FETCH n:* answers with the last message even when n is above every UID (RFC 3501 §6.4.8):
// such a message is dropped, so "nothing new" is an empty slice.
func (m *IMAP) FetchAfter(afterUID uint32, max int) ([]Fetched, error) {
	if m.selected == "" {
		return nil, errors.New("mail: FetchAfter without a selected folder")
	}
	if max <= 0 {
		max = 100
	}
	if afterUID == ^uint32(0) {
		return nil, nil
	}
	// First the UIDs (small), then the bodies of at most max of them: the batch bounds memory.
	// The UIDs of one search serve the following batches of the same selection, so a sync of
	// n messages costs one search, n/max fetches and one last search that finds nothing new.
	if m.uids == nil || afterUID < m.uidsAfter || !hasAbove(m.uids, afterUID) {
		var uids []imap.UID
		err := m.do(func() error {
			var set imap.UIDSet
			set.AddRange(imap.UID(afterUID+1), 0) // 0 is "*"
			data, err := m.c.UIDSearch(&imap.SearchCriteria{UID: []imap.UIDSet{set}}, nil).Wait()
			if err != nil {
				return err
			}
			uids = data.AllUIDs()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("mail: IMAP UID SEARCH: %w", err)
		}
		sortUIDs(uids)
		m.uids, m.uidsAfter = uids, afterUID
	}
	var want []imap.UID
	for _, u := range m.uids {
		// "n:*" always matches the highest UID, even below n: the filter drops it.
		if uint32(u) > afterUID {
			want = append(want, u)
		}
	}
	sortUIDs(want)
	if len(want) > max {
		want = want[:max]
	}
	if len(want) == 0 {
		return nil, nil
	}
	return m.fetchUIDs(afterUID, want)
}

// fetchUIDs fetches the whole messages of uids (ascending).
func (m *IMAP) fetchUIDs(afterUID uint32, uids []imap.UID) ([]Fetched, error) {
	section := &imap.FetchItemBodySection{Peek: true}
	var out []Fetched
	var set imap.UIDSet
	set.AddRange(uids[0], uids[len(uids)-1])
	wanted := make(map[imap.UID]bool, len(uids))
	for _, u := range uids {
		wanted[u] = true
	}
	err := m.do(func() error {
		cmd := m.c.Fetch(set, &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}})
		defer cmd.Close()
		for {
			msg := cmd.Next()
			if msg == nil {
				break
			}
			// Each message extends the deadline: a batch of large messages is slow but alive.
			m.extend()
			buf, err := msg.Collect()
			if err != nil {
				return err
			}
			if buf.UID == 0 || uint32(buf.UID) <= afterUID || !wanted[buf.UID] {
				continue
			}
			raw := buf.FindBodySection(section)
			out = append(out, Fetched{UID: uint32(buf.UID), Raw: raw})
		}
		return cmd.Close()
	})
	if err != nil {
		return nil, fmt.Errorf("mail: IMAP UID FETCH: %w", err)
	}
	sortFetched(out)
	return out, nil
}

// hasAbove reports whether sorted holds a UID above after.
func hasAbove(sorted []imap.UID, after uint32) bool {
	return len(sorted) > 0 && uint32(sorted[len(sorted)-1]) > after
}

func sortUIDs(s []imap.UID) { slices.Sort(s) }

func sortFetched(s []Fetched) {
	slices.SortFunc(s, func(a, b Fetched) int { return cmp.Compare(a.UID, b.UID) })
}

// Check logs in to both servers and logs out: what works of a mailbox's configuration.
func Check(ctx context.Context, cfg Config, imapSrv, smtpSrv Server) (imapErr, smtpErr error) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		c, err := DialIMAP(ctx, cfg, imapSrv)
		if err != nil {
			imapErr = err
			return
		}
		imapErr = c.Close()
	}()
	go func() {
		defer wg.Done()
		smtpErr = checkSMTP(ctx, cfg, smtpSrv)
	}()
	wg.Wait()
	return imapErr, smtpErr
}

// checkSMTP connects, logs in when a username is set, and quits.
func checkSMTP(ctx context.Context, cfg Config, srv Server) error {
	cfg = cfg.WithDefaults()
	ep, err := parseEndpoint(srv.URL, smtpSchemes)
	if err != nil {
		return err
	}
	c, err := openSMTP(ctx, cfg, ep, srv)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.Quit()
	return nil
}
