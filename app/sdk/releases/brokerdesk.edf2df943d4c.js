/*! BrokerDesk lead intake SDK v1 — no dependencies, ES2017. Served at /sdk/v1/brokerdesk.js.
 *
 *   <script src="https://YOUR-BROKERDESK-HOST/sdk/v1/brokerdesk.js"></script>
 *   <script>
 *     var bd = BrokerDesk.init({ key: 'pk_live_...' });            // publishable key: public
 *     bd.bind(document.querySelector('form'), { onSuccess: ..., onError: ... });
 *     // or: bd.submit({ firstName: 'Erika', lastName: 'Mustermann', email: 'e@example.com' })
 *   </script>
 *
 * submit() checks the fields with the server's rules and messages (de, en) before anything is
 * sent; it resolves with {status, body} on 201 and rejects with {status: 400, error,
 * violations: [{field, message}]} when the fields are invalid (sent: false when the SDK found
 * it and nothing was sent), with {status, error, ...} for any other answer, and with
 * {status: 0, error} when the network failed.
 */
(function (root) {
  'use strict';

  // The script's own address, read while it runs: the default endpoint is on its origin.
  var self = typeof document !== 'undefined' && document.currentScript ? document.currentScript.src : '';

  // MESSAGES are the server's violation messages (app/intake/messages.go), word for word, by
  // field and code; {name} stands for the name of an additional field. A Go test checks them
  // against the server.
  var MESSAGES = {
    de: {
      'firstName.required': 'Vorname ist erforderlich',
      'firstName.too_long': 'Vorname: höchstens 100 Zeichen erlaubt',
      'firstName.invalid_type': 'Vorname muss Text sein',
      'lastName.required': 'Nachname ist erforderlich',
      'lastName.too_long': 'Nachname: höchstens 100 Zeichen erlaubt',
      'lastName.invalid_type': 'Nachname muss Text sein',
      'email.too_long': 'E-Mail: höchstens 255 Zeichen erlaubt',
      'email.invalid_email': 'E-Mail ist ungültig',
      'email.invalid_type': 'E-Mail muss Text sein',
      'phone.too_long': 'Telefon: höchstens 50 Zeichen erlaubt',
      'phone.invalid_type': 'Telefon muss Text sein',
      '.email_or_phone_required': 'E-Mail oder Telefon ist erforderlich',
      'notes.too_long': 'Notizen: höchstens 10000 Zeichen erlaubt',
      'notes.invalid_type': 'Notizen muss Text sein',
      'additionalFields.invalid_type': 'Zusatzfelder müssen ein Objekt aus Namen und Werten sein',
      'additionalFields.too_many_fields': 'Höchstens 50 Zusatzfelder sind erlaubt',
      'additionalFields.invalid_field_name': 'Namen von Zusatzfeldern müssen 1 bis 64 Zeichen lang sein',
      'additionalFields.{name}.too_long': 'Zusatzfeld „{name}“: höchstens 1000 Zeichen erlaubt',
      'additionalFields.{name}.invalid_type': 'Zusatzfeld „{name}“ muss Text, eine Zahl oder true/false sein'
    },
    en: {
      'firstName.required': 'First name is required',
      'firstName.too_long': 'First name must be at most 100 characters',
      'firstName.invalid_type': 'First name must be text',
      'lastName.required': 'Last name is required',
      'lastName.too_long': 'Last name must be at most 100 characters',
      'lastName.invalid_type': 'Last name must be text',
      'email.too_long': 'Email must be at most 255 characters',
      'email.invalid_email': 'Email is not valid',
      'email.invalid_type': 'Email must be text',
      'phone.too_long': 'Phone must be at most 50 characters',
      'phone.invalid_type': 'Phone must be text',
      '.email_or_phone_required': 'Email or phone is required',
      'notes.too_long': 'Notes must be at most 10000 characters',
      'notes.invalid_type': 'Notes must be text',
      'additionalFields.invalid_type': 'Additional fields must be an object of names and values',
      'additionalFields.too_many_fields': 'At most 50 additional fields are allowed',
      'additionalFields.invalid_field_name': 'Names of additional fields must have 1 to 64 characters',
      'additionalFields.{name}.too_long': 'Additional field "{name}" must be at most 1000 characters',
      'additionalFields.{name}.invalid_type': 'Additional field "{name}" must be text, a number or true/false'
    }
  };

  var VALIDATION_FAILED = 'Validation failed';

  var SOURCES = ['website', 'referral', 'phone', 'event', 'social_media', 'advertisement', 'partner',
    'landing_page', 'registration', 'other'];

  // The server's bounds (app/intake/input.go).
  var MAX = { name: 100, email: 255, phone: 50, notes: 10000, fields: 50, fieldName: 64, fieldValue: 1000 };

  // ---- the server's text rules ----------------------------------------------------------

  // SPACE is Go's unicode.IsSpace: the server trims exactly these (String.prototype.trim
  // differs: it trims U+FEFF and keeps U+0085).
  var SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
  var TRIM = new RegExp('^' + SPACE + '+|' + SPACE + '+$', 'g');

  // FORMAT is Unicode's category Cf (zero-width characters, bidi controls such as U+202E,
  // U+FEFF) as Go's unicode.Cf has it, astral ones as surrogate pairs (no u flag: ES2017).
  var FORMAT = '[\\u00ad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890-\\u0891\\u08e2\\u180e\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ufff9-\\ufffb]|\\ud804[\\udcbd\\udccd]|\\ud80d[\\udc30-\\udc3f]|\\ud82f[\\udca0-\\udca3]|\\ud834[\\udd73-\\udd7a]|\\udb40[\\udc01\\udc20-\\udc7f]';
  // STRIP: the control characters (C0, C1) left after line breaks and tabs became text, and FORMAT.
  var STRIP = new RegExp('[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]|' + FORMAT, 'g');

  // sanitize is the server's: CR LF becomes LF; line breaks become LF in text (lines) and a
  // space elsewhere, tabs a space; control and format characters are removed.
  function sanitize(s, lines) {
    return String(s).replace(/\r\n/g, '\n').replace(/[\n\r\u2028\u2029]/g, lines ? '\n' : ' ')
      .replace(/\t/g, ' ').replace(STRIP, '');
  }

  // clean is the server's clean() (names, e-mail, phone, field names), cleanText its
  // cleanText() (notes, additional field values): sanitized, white space trimmed.
  function clean(s) { return sanitize(s, false).replace(TRIM, ''); }
  function cleanText(s) { return sanitize(s, true).replace(TRIM, ''); }

  // chars counts code points, as the server counts runes.
  function chars(s) { return Array.from(s).length; }

  // compare orders strings as Go's sort does (by code point, which is UTF-8 byte order).
  function compare(a, b) {
    var x = Array.from(a), y = Array.from(b);
    for (var i = 0; i < x.length && i < y.length; i++) {
      var d = x[i].codePointAt(0) - y[i].codePointAt(0);
      if (d !== 0) return d;
    }
    return x.length - y.length;
  }

  // E-mail: what Go's net/mail.ParseAddress reads back unchanged (a bare addr-spec: dot-atom
  // local part; dot-atom domain or [IP] literal), with a dot in the domain and no white space.
  var ATEXT = "[!#-'*+\\-/-9=?A-Z^-~\\u0080-\\uffff]";
  var DOT_ATOM = ATEXT + '+(?:\\.' + ATEXT + '+)*';
  var EMAIL = new RegExp('^' + DOT_ATOM + '@(?:(' + DOT_ATOM + ')|\\[([!-Z^-~\\u0080-\\uffff]*)\\])$');

  function ipv4(s) {
    var p = s.split('.');
    return p.length === 4 && p.every(function (x) { return /^(0|[1-9][0-9]{0,2})$/.test(x) && +x <= 255; });
  }

  // ip is Go's net.ParseIP: dotted IPv4 or IPv6 (an IPv4 tail allowed, no zone).
  function ip(s) {
    if (ipv4(s)) return true;
    var halves = s.split('::');
    if (s.indexOf(':') < 0 || halves.length > 2) return false;
    var n = 0, ok = true;
    halves.forEach(function (h, hi) {
      if (h === '') return;
      var gs = h.split(':');
      gs.forEach(function (g, gi) {
        var tail = hi === halves.length - 1 && gi === gs.length - 1;
        if (tail && g.indexOf('.') >= 0) {
          if (ipv4(g)) n += 2;
          else ok = false;
        } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) {
          n += 1;
        } else {
          ok = false;
        }
      });
    });
    return ok && (halves.length === 2 ? n < 8 : n === 8);
  }

  function validEmail(s) {
    var m = EMAIL.exec(s);
    if (!m) return false;
    if (m[1] !== undefined) return m[1].indexOf('.') >= 0;
    return m[2].indexOf('.') >= 0 && ip(m[2]);
  }

  function validFieldName(k) {
    var n = chars(k);
    return n > 0 && n <= MAX.fieldName && !/[\u0000-\u001f\u007f-\u009f]/.test(k);
  }

  // ---- reading and checking a submission, as app/intake reads a JSON body ---------------

  // read turns a JSON value (what the server receives) into the server's Submission: cleaned
  // texts, the allowed source or none, additional fields as text, and the problems reading
  // found (a field of the wrong type).
  function read(m) {
    var s = { firstName: '', lastName: '', email: '', phone: '', notes: '', source: '', fields: {}, problems: {} };
    function problem(field, code) { if (!(field in s.problems)) s.problems[field] = code; }
    ['firstName', 'lastName', 'email', 'phone', 'notes'].forEach(function (f) {
      var v = m[f];
      if (v === undefined || v === null) return;
      if (typeof v === 'string') s[f] = f === 'notes' ? cleanText(v) : clean(v);
      else if (typeof v === 'number' && f === 'phone') s[f] = JSON.stringify(v);
      else problem(f, 'invalid_type');
    });
    if (typeof m.source === 'string') {
      var src = clean(m.source).toLowerCase();
      if (SOURCES.indexOf(src) >= 0) s.source = src;
    }
    var af = m.additionalFields;
    if (af !== undefined && af !== null) {
      if (typeof af !== 'object' || Array.isArray(af)) {
        problem('additionalFields', 'invalid_type');
      } else {
        Object.keys(af).forEach(function (raw) {
          var k = clean(raw), v = af[raw];
          if (v === null) return;
          if (typeof v === 'string') s.fields[k] = cleanText(v);
          else if (typeof v === 'number' || typeof v === 'boolean') s.fields[k] = JSON.stringify(v);
          else if (validFieldName(k)) problem('additionalFields.' + k, 'invalid_type');
          else s.fields[k] = '';
        });
      }
    }
    return s;
  }

  // check returns the violations of a read submission as [{field, code}], in the server's order.
  function check(s) {
    var out = [];
    function add(field, code) { out.push({ field: field, code: code }); }
    function field(name, fn) {
      if (name in s.problems) add(name, s.problems[name]);
      else fn();
    }
    ['firstName', 'lastName'].forEach(function (f) {
      field(f, function () {
        if (s[f] === '') add(f, 'required');
        else if (chars(s[f]) > MAX.name) add(f, 'too_long');
      });
    });
    field('email', function () {
      if (s.email === '') return;
      if (chars(s.email) > MAX.email) add('email', 'too_long');
      else if (!validEmail(s.email)) add('email', 'invalid_email');
    });
    field('phone', function () {
      if (chars(s.phone) > MAX.phone) add('phone', 'too_long');
    });
    if (s.email === '' && s.phone === '' && !('email' in s.problems) && !('phone' in s.problems)) {
      add('', 'email_or_phone_required');
    }
    field('notes', function () {
      if (chars(s.notes) > MAX.notes) add('notes', 'too_long');
    });
    field('additionalFields', function () {
      var names = Object.keys(s.fields);
      if (names.length > MAX.fields) {
        add('additionalFields', 'too_many_fields');
        return;
      }
      var badName = false;
      names.sort(compare).forEach(function (k) {
        if (!validFieldName(k)) {
          if (!badName) add('additionalFields', 'invalid_field_name'); // once, whatever the names
          badName = true;
        } else if (chars(s.fields[k]) > MAX.fieldValue) {
          add('additionalFields.' + k, 'too_long');
        }
      });
    });
    Object.keys(s.problems).filter(function (k) { return k.indexOf('additionalFields.') === 0; })
      .sort(compare).forEach(function (k) { add(k, s.problems[k]); });
    return out;
  }

  function message(v, lang) {
    var m = MESSAGES[lang];
    if (v.field.indexOf('additionalFields.') === 0) {
      return m['additionalFields.{name}.' + v.code].split('{name}').join(v.field.slice(17));
    }
    return m[v.field + '.' + v.code];
  }

  function language(lang) {
    var l = String(lang || (typeof document !== 'undefined' && document.documentElement.lang) || 'de').toLowerCase();
    return l.slice(0, 2) === 'en' ? 'en' : 'de';
  }

  // json is what the server would receive for fields: the JSON round trip drops undefined and
  // functions, turns dates into strings and NaN into null, exactly as the request body will.
  function json(fields) {
    var v = JSON.parse(JSON.stringify(fields === undefined ? {} : fields));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {};
  }

  // validate returns the violations [{field, message}] the server would answer for fields
  // ([] when it would take them).
  function validate(fields, lang) {
    var l = language(lang);
    return check(read(json(fields))).map(function (v) { return { field: v.field, message: message(v, l) }; });
  }

  // body is the request body: the fields as given (the server reads them as validate did),
  // an unknown source left out, _meta.url the page's address (pageAddress). _key and _redirect
  // never leave the page: the key travels as X-API-Key, and the page navigates itself after
  // success.
  function body(fields) {
    var b = json(fields);
    delete b._key;
    delete b._redirect;
    delete b['_meta.url'];
    if (typeof b.source === 'string') {
      var src = clean(b.source).toLowerCase();
      if (SOURCES.indexOf(src) >= 0) b.source = src;
      else delete b.source;
    }
    b._meta = { url: pageAddress() };
    return b;
  }

  // pageAddress is the page's origin and path, never its query or fragment: those can carry
  // what the site never meant to hand on (a visitor's e-mail address from a link, a sign-in or
  // reset token, session ids). '' outside an http(s) page.
  function pageAddress() {
    if (typeof location === 'undefined' || (location.protocol !== 'http:' && location.protocol !== 'https:')) return '';
    return location.origin + location.pathname;
  }

  function defaultEndpoint() {
    var base = self || (typeof location !== 'undefined' ? location.href : '');
    try {
      return new URL('/api/public/leads', base).href;
    } catch (e) {
      return '/api/public/leads';
    }
  }

  // ---- the client ----------------------------------------------------------------------

  // Client submits leads with one publishable key.
  function Client(opts) {
    var o = opts || {};
    if (!o.key) throw new Error('BrokerDesk.init: key is required (a publishable pk_live_ key)');
    this.key = String(o.key);
    this.endpoint = o.endpoint || defaultEndpoint();
    this.lang = language(o.lang);
  }

  // validate returns the violations of fields in the client's language.
  Client.prototype.validate = function (fields) { return validate(fields, this.lang); };

  // submit validates fields and posts them as JSON. Nothing is sent when they are invalid.
  Client.prototype.submit = async function (fields) {
    var violations = this.validate(fields);
    if (violations.length > 0) {
      throw { status: 400, error: VALIDATION_FAILED, violations: violations, sent: false };
    }
    var res;
    try {
      res = await fetch(this.endpoint, {
        method: 'POST',
        mode: 'cors',
        credentials: 'omit',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': this.key, 'Accept-Language': this.lang },
        body: JSON.stringify(body(fields))
      });
    } catch (e) {
      throw { status: 0, error: String((e && e.message) || e), violations: [] };
    }
    var data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    if (res.status === 201) return { status: res.status, body: data || {} };
    var err = { status: res.status, violations: [] };
    if (data && typeof data === 'object') Object.keys(data).forEach(function (k) { err[k] = data[k]; });
    if (!Array.isArray(err.violations)) {
      // The v1 intake answers problems: their errors[] are the violations.
      err.violations = Array.isArray(err.errors) ? err.errors.map(function (e) {
        return { field: e.field, message: e.detail };
      }) : [];
    }
    if (typeof err.error !== 'string' && typeof err.title === 'string') err.error = err.detail || err.title;
    if (typeof err.error !== 'string') err.error = res.statusText || 'HTTP ' + res.status;
    throw err;
  };

  // fieldsOf reads a form's named controls into submit()'s shape. As the server reads a form,
  // the first value of a name wins, and repeated additional fields (checkbox groups) are
  // joined with ", ". Files are left out: a plain multipart form posts them.
  function fieldsOf(form) {
    var f = { additionalFields: {} };
    var seen = {};
    new FormData(form).forEach(function (v, k) {
      if (typeof v !== 'string') return;
      var name = k.indexOf('additionalFields.') === 0 ? k.slice(17)
        : k.indexOf('additionalFields[') === 0 && k.slice(-1) === ']' ? k.slice(17, -1) : null;
      if (name !== null) {
        name = clean(name);
        v = cleanText(v);
        if (!(name in f.additionalFields)) f.additionalFields[name] = v;
        else if (v !== '') f.additionalFields[name] = (f.additionalFields[name] + ', ' + v).replace(/^, /, '');
        return;
      }
      if (seen[k]) return;
      seen[k] = true;
      if (k === '_meta.url' || k === '_meta[url]' || k === '_charset_') return;
      f[k] = v;
    });
    if (Object.keys(f.additionalFields).length === 0) delete f.additionalFields;
    return f;
  }

  // safeRedirect accepts only http(s) addresses, resolved against the page.
  function safeRedirect(v) {
    if (!v) return '';
    try {
      var u = new URL(clean(v), location.href);
      return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : '';
    } catch (e) {
      return '';
    }
  }

  // bind takes over form's submit: it prevents the browser's own post, submits the form's
  // fields, calls onSuccess(result, form) or onError(error, form), and after success navigates
  // to the form's _redirect field when it has one. It shows nothing itself. It returns a
  // function that unbinds the form.
  Client.prototype.bind = function (form, handlers) {
    var client = this;
    var h = handlers || {};
    var el = typeof form === 'string' ? document.querySelector(form) : form;
    if (!el || el.tagName !== 'FORM') throw new Error('BrokerDesk.bind: not a <form>: ' + form);
    var busy = false;
    function onSubmit(ev) {
      ev.preventDefault();
      if (busy) return; // a double click sends one lead
      busy = true;
      var fields = fieldsOf(el);
      var redirect = safeRedirect(fields._redirect);
      client.submit(fields).then(function (result) {
        busy = false;
        if (h.onSuccess) h.onSuccess(result, el);
        if (redirect) location.assign(redirect);
      }, function (error) {
        busy = false;
        if (h.onError) h.onError(error, el);
      });
    }
    el.addEventListener('submit', onSubmit);
    return function () { el.removeEventListener('submit', onSubmit); };
  };

  var current = null;
  function need() {
    if (!current) throw new Error('BrokerDesk: call BrokerDesk.init({key}) first');
    return current;
  }

  root.BrokerDesk = {
    version: '1',
    sources: SOURCES.slice(),
    // init makes the client that BrokerDesk.submit and BrokerDesk.bind use, and returns it.
    init: function (opts) { current = new Client(opts); return current; },
    submit: function (fields) {
      try { return need().submit(fields); } catch (e) { return Promise.reject(e); }
    },
    bind: function (form, handlers) { return need().bind(form, handlers); },
    validate: function (fields, lang) { return validate(fields, lang || (current ? current.lang : undefined)); }
  };
})(typeof window !== 'undefined' ? window : this);
