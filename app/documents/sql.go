package documents

// The statements of this package that ent does not write, each with the reason.

// documentKeysQuery and transferKeysQuery name which of the blob keys $1 a row of the pinned
// company still holds. Raw SQL because the sweep is a river job on the job pool: it reads in a
// pgx transaction (tenancy.BeginPgx), where ent has no client.
const (
	documentKeysQuery = `SELECT blob_key FROM documents WHERE blob_key = ANY($1)`
	transferKeysQuery = `SELECT blob_key FROM portfolio_transfers WHERE blob_key = ANY($1)`
	// app/emails: RawPrefix and AttachmentPrefix (app/emails/store.go).
	emailRawKeysQuery        = `SELECT raw_key FROM emails WHERE raw_key = ANY($1)`
	emailAttachmentKeysQuery = `SELECT blob_key FROM email_attachments WHERE blob_key = ANY($1)`
	// app/signatures: the merged PDF a request's signers see.
	signatureSourceKeysQuery     = `SELECT source_blob_key FROM signature_requests WHERE source_blob_key = ANY($1)`
	commissionStatementKeysQuery = `SELECT blob_key FROM commission_statements WHERE blob_key = ANY($1)`
)
