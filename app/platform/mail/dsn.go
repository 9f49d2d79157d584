package mail

import (
	"bufio"
	"bytes"
	"net/textproto"
	"strings"
)

// deliveryStatus reads a message/delivery-status body (RFC 3464 §2.1): a block of per-message
// fields, then one block per recipient, blocks separated by empty lines. Of several recipients
// the first failed one wins (it is what the sender must act on), else the first.
func (st *walkState) deliveryStatus(data []byte) {
	p := st.p
	if p.DSN == nil {
		p.DSN = &DSN{}
	}
	r := textproto.NewReader(bufio.NewReader(bytes.NewReader(data)))
	var recipients []textproto.MIMEHeader
	for i := 0; i < 1000; i++ {
		h, err := r.ReadMIMEHeader()
		if len(h) > 0 {
			if i == 0 && h.Get("Action") == "" {
				// The per-message block: Original-Message-ID is not in RFC 3464 but some
				// servers write it there.
				if ids := msgIDs(h.Get("Original-Message-Id")); len(ids) > 0 && p.DSN.OriginalMessageID == "" {
					p.DSN.OriginalMessageID = ids[0]
				}
			} else {
				recipients = append(recipients, h)
			}
		}
		if err != nil {
			break
		}
	}
	if len(recipients) == 0 {
		p.problem("delivery-status report without a recipient block")
		return
	}
	pick := recipients[0]
	for _, rh := range recipients {
		if strings.EqualFold(strings.TrimSpace(rh.Get("Action")), "failed") {
			pick = rh
			break
		}
	}
	p.DSN.Action = strings.ToLower(strings.TrimSpace(pick.Get("Action")))
	p.DSN.Status = strings.TrimSpace(pick.Get("Status"))
	diag := strings.TrimSpace(pick.Get("Diagnostic-Code"))
	// "smtp; 550 5.1.1 ..." : the diagnostic type is noise for a person.
	if t, rest, ok := strings.Cut(diag, ";"); ok && !strings.ContainsAny(t, " \t") {
		diag = strings.TrimSpace(rest)
	}
	p.DSN.Diagnostic = toValidUTF8(strings.Join(strings.Fields(diag), " "))
	if ids := msgIDs(pick.Get("Original-Message-Id")); len(ids) > 0 && p.DSN.OriginalMessageID == "" {
		p.DSN.OriginalMessageID = ids[0]
	}
}

// reportedMessage reads the Message-ID of the returned message or headers (the third part of a
// multipart/report), the usual way to find which of our messages bounced.
func (st *walkState) reportedMessage(data []byte) {
	p := st.p
	h, _ := lenientHeader(data)
	id := ""
	if ids := msgIDs(h.Get("Message-Id")); len(ids) > 0 {
		id = ids[0]
	}
	if id == "" {
		return
	}
	if p.DSN == nil {
		p.DSN = &DSN{}
	}
	if p.DSN.OriginalMessageID == "" {
		p.DSN.OriginalMessageID = id
	}
}
