//! A D-Bus client for one job: many method calls on one connection,
//! pipelined, with one deadline for all of them. systemd's units are read
//! this way: a list and then hundreds of property reads sent without waiting
//! for each answer, so a read costs a few round trips whatever the number of
//! units, and a bus that does not answer costs the deadline and no more.
//!
//! Only what that needs: a `unix:` address (a path or an abstract name),
//! the EXTERNAL authentication, method calls whose arguments are strings,
//! and replies decoded from any signature into [`Value`]s. The decoder
//! takes untrusted bytes: every length is checked against what is left,
//! and nesting is limited, so no message makes it panic or allocate beyond
//! the message's own size.

use std::io::{self, Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::Instant;

/// The system bus when `DBUS_SYSTEM_BUS_ADDRESS` does not name another.
pub const SYSTEM_BUS: &str = "unix:path=/run/dbus/system_bus_socket";

/// A message larger than this is refused (the specification's limit).
const MAX_MESSAGE: usize = 128 << 20;
/// Containers nested deeper than this are refused (the specification's
/// limit is 64 for arrays and structures together).
const MAX_DEPTH: usize = 64;

/// A decoded value. Strings, object paths and signatures are all `Str`;
/// a dictionary entry is a `Struct` of two.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Byte(u8),
    Bool(bool),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(String),
    /// A file descriptor's index (`h`): never passed here.
    Fd(u32),
    Array(Vec<Value>),
    Struct(Vec<Value>),
    Variant(Box<Value>),
}

impl Value {
    /// The string inside, through any variants.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            Value::Variant(v) => v.as_str(),
            _ => None,
        }
    }

    /// An unsigned number inside, through any variants.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Byte(v) => Some(u64::from(*v)),
            Value::U16(v) => Some(u64::from(*v)),
            Value::U32(v) => Some(u64::from(*v)),
            Value::U64(v) => Some(*v),
            Value::Bool(v) => Some(u64::from(*v)),
            Value::Variant(v) => v.as_u64(),
            _ => None,
        }
    }
}

/// One method call: its arguments are strings (signature `s` each).
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub destination: &'a str,
    pub path: &'a str,
    pub interface: &'a str,
    pub member: &'a str,
    pub args: &'a [&'a str],
}

/// A call's answer: its values, or the error the callee returned.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Values(Vec<Value>),
    Error { name: String, message: String },
}

/// A connection, authenticated (and, on a bus, with its unique name).
pub struct Connection {
    sock: UnixStream,
    serial: u32,
    /// Bytes read and not yet taken as messages.
    rbuf: Vec<u8>,
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("D-Bus: no answer to {what} before the read's deadline"),
    )
}

fn bad(detail: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, detail.into())
}

/// Waits until the socket is ready for `events` or the deadline passes.
fn wait(sock: &UnixStream, events: libc::c_short, deadline: Instant, what: &str) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out(what));
        }
        let mut p = libc::pollfd {
            fd: sock.as_raw_fd(),
            events,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        // SAFETY: one valid pollfd for the call's duration.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n > 0 {
            return Ok(());
        }
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// A non-blocking connected socket to a `unix:path=` or `unix:abstract=`
/// address (the first of a `;`-separated list that names one).
fn connect(address: &str) -> io::Result<UnixStream> {
    let mut target = None;
    for a in address.split(';') {
        let Some(kv) = a.strip_prefix("unix:") else {
            continue;
        };
        for pair in kv.split(',') {
            match pair.split_once('=') {
                Some(("path", p)) => target = Some((false, unescape(p))),
                Some(("abstract", p)) => target = Some((true, unescape(p))),
                _ => {}
            }
        }
        if target.is_some() {
            break;
        }
    }
    let Some((abstract_, name)) = target else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "D-Bus address {address:?}: accepted: unix:path=/a/socket or unix:abstract=name"
            ),
        ));
    };
    // SAFETY: plain socket(2); the descriptor is owned at once.
    let fd = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just created and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sockaddr_un is plain data; zeroed is a valid value.
    let mut sa: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    sa.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let start = usize::from(abstract_);
    if name.len() + start >= sa.sun_path.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("D-Bus address {address:?}: the socket's name is too long"),
        ));
    }
    for (i, b) in name.iter().enumerate() {
        sa.sun_path[start + i] = *b as libc::c_char;
    }
    let len =
        std::mem::size_of::<libc::sa_family_t>() + start + name.len() + usize::from(!abstract_);
    use std::os::fd::AsRawFd;
    // SAFETY: sa is a valid sockaddr_un of `len` meaningful bytes. On a
    // non-blocking socket a full listen queue gives EAGAIN at once instead
    // of a wait without end on a bus that accepts nothing.
    let r = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&raw const sa).cast(),
            len as libc::socklen_t,
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        let shown = String::from_utf8_lossy(&name).into_owned();
        return Err(match e.raw_os_error() {
            Some(libc::EAGAIN) => io::Error::new(
                io::ErrorKind::WouldBlock,
                format!("D-Bus {shown}: the bus accepts no more connections (its queue is full)"),
            ),
            _ => io::Error::new(e.kind(), format!("D-Bus {shown}: {e}")),
        });
    }
    Ok(UnixStream::from(fd))
}

/// An address value's `%xx` escapes decoded.
fn unescape(v: &str) -> Vec<u8> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

impl Connection {
    /// A connected socket to `address`, not yet authenticated; it never
    /// waits ([`Connection::handshake`] is the rest).
    pub fn connect(address: &str) -> io::Result<Connection> {
        Ok(Connection {
            sock: connect(address)?,
            serial: 0,
            rbuf: Vec::new(),
        })
    }

    /// Whether the peer has sent something (or closed) since: a read of
    /// it would not wait.
    pub fn readable_now(&self) -> bool {
        use std::os::fd::AsRawFd;
        let mut p = libc::pollfd {
            fd: self.sock.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no wait.
        unsafe { libc::poll(&mut p, 1, 0) > 0 }
    }

    /// Authenticates as this process's user and, on a message bus (`bus`),
    /// says Hello; everything before `deadline`.
    pub fn handshake(&mut self, address: &str, bus: bool, deadline: Instant) -> io::Result<()> {
        // SAFETY: geteuid cannot fail.
        let uid = unsafe { libc::geteuid() };
        let hex: String = uid
            .to_string()
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect();
        let c = self;
        c.write_all(format!("\0AUTH EXTERNAL {hex}\r\n").as_bytes(), deadline)?;
        let line = c.read_line(deadline)?;
        if !line.starts_with(b"OK ") {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "D-Bus {address}: authentication refused ({})",
                    String::from_utf8_lossy(&line).trim()
                ),
            ));
        }
        c.write_all(b"BEGIN\r\n", deadline)?;
        if bus {
            let hello = Call {
                destination: "org.freedesktop.DBus",
                path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus",
                member: "Hello",
                args: &[],
            };
            match c.call_all(&[hello], 1, deadline)?.pop() {
                Some(Reply::Values(_)) => {}
                Some(Reply::Error { name, message }) => {
                    return Err(bad(format!("D-Bus Hello: {name}: {message}")));
                }
                None => return Err(bad("D-Bus Hello: no reply")),
            }
        }
        Ok(())
    }

    fn write_all(&mut self, mut b: &[u8], deadline: Instant) -> io::Result<()> {
        while !b.is_empty() {
            match self.sock.write(b) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => b = &b[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    wait(&self.sock, libc::POLLOUT, deadline, "a write")?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads what is there into `rbuf`; false once the peer closed.
    fn fill(&mut self) -> io::Result<bool> {
        let mut chunk = [0u8; 16 << 10];
        loop {
            match self.sock.read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.rbuf.extend_from_slice(&chunk[..n]);
                    if n < chunk.len() {
                        return Ok(true);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn read_line(&mut self, deadline: Instant) -> io::Result<Vec<u8>> {
        loop {
            if let Some(i) = self.rbuf.windows(2).position(|w| w == b"\r\n") {
                let line = self.rbuf[..i].to_vec();
                self.rbuf.drain(..i + 2);
                return Ok(line);
            }
            if self.rbuf.len() > 4096 {
                return Err(bad("D-Bus: an authentication line over 4 KiB"));
            }
            wait(&self.sock, libc::POLLIN, deadline, "the authentication")?;
            if !self.fill()? {
                return Err(bad(
                    "D-Bus: the bus closed the connection while authenticating",
                ));
            }
        }
    }

    /// Sends `calls`, at most `window` unanswered at a time (a bus limits
    /// the replies it keeps pending for one connection: 128 by default),
    /// and returns their replies in order. Messages that answer nothing
    /// asked here (signals) are passed over.
    pub fn call_all(
        &mut self,
        calls: &[Call],
        window: usize,
        deadline: Instant,
    ) -> io::Result<Vec<Reply>> {
        let window = window.max(1);
        // Each call's serial (they wrap past u32::MAX, skipping 0).
        let mut index: std::collections::HashMap<u32, usize> =
            std::collections::HashMap::with_capacity(calls.len());
        let mut replies: Vec<Option<Reply>> = vec![None; calls.len()];
        let (mut sent, mut answered) = (0usize, 0usize);
        let mut out = Vec::new();
        let mut out_at = 0usize;
        while answered < calls.len() {
            // Queue calls up to the window.
            while sent < calls.len()
                && sent - answered.min(sent) < window
                && out.len() - out_at < (1 << 20)
            {
                self.serial = self.serial.wrapping_add(1).max(1);
                encode_call(&calls[sent], self.serial, &mut out);
                index.insert(self.serial, sent);
                sent += 1;
            }
            // Write what can be written, read what has come.
            let mut events = libc::POLLIN;
            if out_at < out.len() {
                match self.sock.write(&out[out_at..]) {
                    Ok(n) => out_at += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
                if out_at == out.len() {
                    out.clear();
                    out_at = 0;
                } else {
                    events |= libc::POLLOUT;
                }
            }
            let open = self.fill()?;
            let mut progressed = false;
            // Every whole message read, then what they took dropped at once.
            let mut at = 0;
            while let Some(len) = message_len(&self.rbuf[at..])? {
                let msg = decode_message(&self.rbuf[at..at + len]);
                at += len;
                let Some(rs) = msg?.reply_serial_and_reply() else {
                    continue;
                };
                if let Some(&i) = index.get(&rs.0)
                    && replies[i].is_none()
                {
                    replies[i] = Some(rs.1);
                    answered += 1;
                    progressed = true;
                }
            }
            self.rbuf.drain(..at);
            if answered == calls.len() {
                break;
            }
            if !open {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "D-Bus: the bus closed the connection",
                ));
            }
            if !progressed || sent == calls.len() {
                wait(&self.sock, events, deadline, "a method call")?;
            }
        }
        Ok(replies
            .into_iter()
            .map(|r| r.expect("every call answered"))
            .collect())
    }
}

struct Message {
    reply_serial: Option<u32>,
    reply: Reply,
}

impl Message {
    fn reply_serial_and_reply(self) -> Option<(u32, Reply)> {
        Some((self.reply_serial?, self.reply))
    }
}

/// The length of the first whole message in `b`, if it is all there.
fn message_len(b: &[u8]) -> io::Result<Option<usize>> {
    if b.len() < 16 {
        return Ok(None);
    }
    let big = match b[0] {
        b'l' => false,
        b'B' => true,
        x => {
            return Err(bad(format!(
                "D-Bus: a message with endianness byte {x:#04x}; accepted: 'l' or 'B'"
            )));
        }
    };
    let u = |i: usize| {
        let w = [b[i], b[i + 1], b[i + 2], b[i + 3]];
        if big {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        }
    };
    let body = u(4) as usize;
    let fields = u(12) as usize;
    let header = (16 + fields).div_ceil(8) * 8;
    let total = header.saturating_add(body);
    if total > MAX_MESSAGE {
        return Err(bad(format!(
            "D-Bus: a message of {total} bytes; at most {MAX_MESSAGE}"
        )));
    }
    Ok((b.len() >= total).then_some(total))
}

/// Decodes one whole message: its header fields and, for a reply or an
/// error, its body.
fn decode_message(b: &[u8]) -> io::Result<Message> {
    let big = b[0] == b'B';
    let mut d = Decoder {
        b,
        at: 0,
        big,
        depth: 0,
    };
    let head = d.values(b"yyyyuua(yv)")?;
    let kind = match head[1] {
        Value::Byte(k) => k,
        _ => 0,
    };
    let (mut reply_serial, mut signature, mut error) = (None, String::new(), String::new());
    if let Value::Array(fields) = &head[6] {
        for f in fields {
            let Value::Struct(kv) = f else { continue };
            match (&kv[0], &kv[1]) {
                (Value::Byte(5), v) => reply_serial = v.as_u64().map(|x| x as u32),
                (Value::Byte(8), v) => signature = v.as_str().unwrap_or_default().to_owned(),
                (Value::Byte(4), v) => error = v.as_str().unwrap_or_default().to_owned(),
                _ => {}
            }
        }
    }
    d.align(8)?;
    let body = if kind == 2 || kind == 3 {
        d.values(signature.as_bytes())?
    } else {
        Vec::new()
    };
    let reply = if kind == 3 {
        let message = body
            .first()
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Reply::Error {
            name: error,
            message,
        }
    } else {
        Reply::Values(body)
    };
    Ok(Message {
        reply_serial: if kind == 2 || kind == 3 {
            reply_serial
        } else {
            None
        },
        reply,
    })
}

/// Decodes a message body (or any marshalled bytes starting 8-aligned)
/// of `signature`: what a fuzzer calls.
pub fn decode(signature: &[u8], bytes: &[u8], big_endian: bool) -> io::Result<Vec<Value>> {
    Decoder {
        b: bytes,
        at: 0,
        big: big_endian,
        depth: 0,
    }
    .values(signature)
}

/// Decodes a whole message, as a reply is decoded: what a fuzzer calls.
pub fn decode_whole(bytes: &[u8]) -> io::Result<Option<Reply>> {
    match message_len(bytes)? {
        Some(n) if n == bytes.len() => Ok(Some(decode_message(bytes)?.reply)),
        _ => Ok(None),
    }
}

struct Decoder<'a> {
    b: &'a [u8],
    at: usize,
    big: bool,
    depth: usize,
}

fn short() -> io::Error {
    bad("D-Bus: a message shorter than its contents say")
}

impl Decoder<'_> {
    fn align(&mut self, n: usize) -> io::Result<()> {
        let to = self.at.div_ceil(n) * n;
        if to > self.b.len() {
            return Err(short());
        }
        self.at = to;
        Ok(())
    }

    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.b.len())
            .ok_or_else(short)?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn fixed<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        self.align(N)?;
        let mut w: [u8; N] = self.take(N)?.try_into().expect("N bytes");
        if self.big {
            w.reverse();
        }
        Ok(w)
    }

    fn u32(&mut self) -> io::Result<u32> {
        Ok(u32::from_le_bytes(self.fixed::<4>()?))
    }

    fn string(&mut self, len: usize) -> io::Result<String> {
        let s = self.take(len)?;
        let s = std::str::from_utf8(s)
            .map_err(|_| bad("D-Bus: a string that is not UTF-8"))?
            .to_owned();
        if self.take(1)? != [0] {
            return Err(bad("D-Bus: a string without its terminating nul"));
        }
        Ok(s)
    }

    /// Every complete type of `sig`, in order.
    fn values(&mut self, mut sig: &[u8]) -> io::Result<Vec<Value>> {
        let mut out = Vec::new();
        while !sig.is_empty() {
            let n = type_len(sig)?;
            out.push(self.value(&sig[..n])?);
            sig = &sig[n..];
        }
        Ok(out)
    }

    /// One value of the complete type `t`.
    fn value(&mut self, t: &[u8]) -> io::Result<Value> {
        Ok(match t[0] {
            b'y' => Value::Byte(self.take(1)?[0]),
            b'b' => Value::Bool(self.u32()? != 0),
            b'n' => Value::I16(i16::from_le_bytes(self.fixed::<2>()?)),
            b'q' => Value::U16(u16::from_le_bytes(self.fixed::<2>()?)),
            b'i' => Value::I32(i32::from_le_bytes(self.fixed::<4>()?)),
            b'u' => Value::U32(self.u32()?),
            b'h' => Value::Fd(self.u32()?),
            b'x' => Value::I64(i64::from_le_bytes(self.fixed::<8>()?)),
            b't' => Value::U64(u64::from_le_bytes(self.fixed::<8>()?)),
            b'd' => Value::F64(f64::from_le_bytes(self.fixed::<8>()?)),
            b's' | b'o' => {
                let n = self.u32()? as usize;
                Value::Str(self.string(n)?)
            }
            b'g' => {
                let n = usize::from(self.take(1)?[0]);
                Value::Str(self.string(n)?)
            }
            b'v' => {
                let n = usize::from(self.take(1)?[0]);
                let sig = self.take(n)?.to_vec();
                if self.take(1)? != [0] {
                    return Err(bad("D-Bus: a variant's signature without its nul"));
                }
                if sig.is_empty() || type_len(&sig)? != sig.len() {
                    return Err(bad(
                        "D-Bus: a variant whose signature is not one complete type",
                    ));
                }
                self.nest(|d| d.value(&sig).map(|v| Value::Variant(Box::new(v))))?
            }
            b'a' => {
                let n = self.u32()? as usize;
                let elem = &t[1..];
                self.align(alignment(elem[0]))?;
                let end = self
                    .at
                    .checked_add(n)
                    .filter(|e| *e <= self.b.len())
                    .ok_or_else(short)?;
                self.nest(|d| {
                    let mut items = Vec::new();
                    while d.at < end {
                        items.push(d.value(elem)?);
                    }
                    if d.at != end {
                        return Err(bad("D-Bus: an array's elements overrun its length"));
                    }
                    Ok(Value::Array(items))
                })?
            }
            b'(' | b'{' => {
                self.align(8)?;
                let inner = &t[1..t.len() - 1];
                self.nest(|d| d.values(inner).map(Value::Struct))?
            }
            x => return Err(bad(format!("D-Bus: unknown type code {:?}", x as char))),
        })
    }

    fn nest(&mut self, f: impl FnOnce(&mut Self) -> io::Result<Value>) -> io::Result<Value> {
        if self.depth >= MAX_DEPTH {
            return Err(bad(format!("D-Bus: values nested over {MAX_DEPTH} deep")));
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }
}

fn alignment(code: u8) -> usize {
    match code {
        b'y' | b'g' | b'v' => 1,
        b'n' | b'q' => 2,
        b'b' | b'i' | b'u' | b'h' | b's' | b'o' | b'a' => 4,
        _ => 8,
    }
}

/// The length of the first complete type in `sig`.
fn type_len(sig: &[u8]) -> io::Result<usize> {
    fn len(sig: &[u8], depth: usize) -> io::Result<usize> {
        if depth > MAX_DEPTH {
            return Err(bad(format!(
                "D-Bus: a signature nested over {MAX_DEPTH} deep"
            )));
        }
        let Some(&c) = sig.first() else {
            return Err(bad("D-Bus: a signature ends inside a type"));
        };
        Ok(match c {
            b'y' | b'b' | b'n' | b'q' | b'i' | b'u' | b'x' | b't' | b'd' | b's' | b'o' | b'g'
            | b'v' | b'h' => 1,
            b'a' => 1 + len(&sig[1..], depth + 1)?,
            b'(' | b'{' => {
                let close = if c == b'(' { b')' } else { b'}' };
                let mut i = 1;
                let mut members = 0;
                while sig.get(i) != Some(&close) {
                    if i >= sig.len() {
                        return Err(bad("D-Bus: a signature's structure is not closed"));
                    }
                    i += len(&sig[i..], depth + 1)?;
                    members += 1;
                }
                if members == 0 || (c == b'{' && members != 2) {
                    return Err(bad(
                        "D-Bus: an empty structure or a dictionary entry not of two",
                    ));
                }
                i + 1
            }
            x => {
                return Err(bad(format!(
                    "D-Bus: unknown type code {:?} in a signature",
                    x as char
                )));
            }
        })
    }
    len(sig, 0)
}

/// Appends a method call, little-endian, to `out`.
fn encode_call(c: &Call, serial: u32, out: &mut Vec<u8>) {
    let start = out.len();
    let pad = |out: &mut Vec<u8>, n: usize| {
        while !(out.len() - start).is_multiple_of(n) {
            out.push(0);
        }
    };
    let string = |out: &mut Vec<u8>, s: &str| {
        pad(out, 4);
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
        out.push(0);
    };
    out.extend_from_slice(&[b'l', 1, 0, 1]);
    let body_len_at = out.len();
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&serial.to_le_bytes());
    let fields_len_at = out.len();
    out.extend_from_slice(&[0; 4]);
    let fields_start = out.len();
    let sig: String = "s".repeat(c.args.len());
    let field = |out: &mut Vec<u8>, code: u8, t: u8, v: &str| {
        pad(out, 8);
        out.extend_from_slice(&[code, 1, t, 0]);
        if t == b'g' {
            out.push(v.len() as u8);
            out.extend_from_slice(v.as_bytes());
            out.push(0);
        } else {
            string(out, v);
        }
    };
    field(out, 1, b'o', c.path);
    field(out, 2, b's', c.interface);
    field(out, 3, b's', c.member);
    if !c.destination.is_empty() {
        field(out, 6, b's', c.destination);
    }
    if !sig.is_empty() {
        field(out, 8, b'g', &sig);
    }
    let fields_len = (out.len() - fields_start) as u32;
    out[fields_len_at..fields_len_at + 4].copy_from_slice(&fields_len.to_le_bytes());
    pad(out, 8);
    let body_start = out.len();
    for a in c.args {
        string(out, a);
    }
    let body_len = (out.len() - body_start) as u32;
    out[body_len_at..body_len_at + 4].copy_from_slice(&body_len.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_decodes_back_to_its_fields() {
        let mut b = Vec::new();
        let c = Call {
            destination: "org.freedesktop.systemd1",
            path: "/org/freedesktop/systemd1/unit/cron_2eservice",
            interface: "org.freedesktop.DBus.Properties",
            member: "Get",
            args: &["org.freedesktop.systemd1.Service", "NRestarts"],
        };
        encode_call(&c, 7, &mut b);
        assert_eq!(message_len(&b).unwrap(), Some(b.len()));
        let mut d = Decoder {
            b: &b,
            at: 0,
            big: false,
            depth: 0,
        };
        let head = d.values(b"yyyyuua(yv)").unwrap();
        assert_eq!(head[5], Value::U32(7));
        let Value::Array(fields) = &head[6] else {
            panic!()
        };
        let strs: Vec<&str> = fields
            .iter()
            .filter_map(|f| match f {
                Value::Struct(kv) => kv[1].as_str(),
                _ => None,
            })
            .collect();
        assert_eq!(strs, [c.path, c.interface, c.member, c.destination, "ss"]);
        d.align(8).unwrap();
        let body = d.values(b"ss").unwrap();
        assert_eq!(body[1].as_str(), Some("NRestarts"));
        assert_eq!(d.at, b.len());
        // Cut anywhere, it is not yet whole; never a panic.
        for n in 0..b.len() {
            assert!(matches!(message_len(&b[..n]), Ok(None) | Ok(Some(_))));
            let _ = decode_whole(&b[..n]);
        }
    }

    #[test]
    fn arrays_structs_and_variants_decode() {
        // a(su) of two, then v holding t, big-endian.
        let mut b = Vec::new();
        let body: Vec<u8> = {
            let mut e = Vec::new();
            let s = |e: &mut Vec<u8>, x: &str| {
                while !e.len().is_multiple_of(4) {
                    e.push(0)
                }
                e.extend_from_slice(&(x.len() as u32).to_be_bytes());
                e.extend_from_slice(x.as_bytes());
                e.push(0);
            };
            e.extend_from_slice(&[0; 4]); // array length, set below
            e.extend_from_slice(&[0; 4]); // pad to the struct's 8
            s(&mut e, "a");
            e.extend_from_slice(&[0, 0]);
            e.extend_from_slice(&1u32.to_be_bytes());
            e.extend_from_slice(&[0; 4]); // pad to the second struct's 8
            s(&mut e, "bc");
            e.push(0);
            e.extend_from_slice(&2u32.to_be_bytes());
            let n = (e.len() - 8) as u32;
            e[..4].copy_from_slice(&n.to_be_bytes());
            e.extend_from_slice(&[1, b't', 0]);
            while !e.len().is_multiple_of(8) {
                e.push(0)
            }
            e.extend_from_slice(&42u64.to_be_bytes());
            e
        };
        b.extend_from_slice(&body);
        let v = decode(b"a(su)v", &b, true).unwrap();
        assert_eq!(
            v[0],
            Value::Array(vec![
                Value::Struct(vec![Value::Str("a".into()), Value::U32(1)]),
                Value::Struct(vec![Value::Str("bc".into()), Value::U32(2)]),
            ])
        );
        assert_eq!(v[1].as_u64(), Some(42));
    }

    #[test]
    fn hostile_lengths_and_nesting_are_errors() {
        // An array claiming 4 GiB.
        assert!(decode(b"ay", &[0xff, 0xff, 0xff, 0xff], false).is_err());
        // Variants in variants beyond the limit.
        let mut b = Vec::new();
        for _ in 0..100 {
            b.extend_from_slice(&[1, b'v', 0]);
        }
        assert!(decode(b"v", &b, false).is_err());
        assert!(type_len(&[b'a'; 200]).is_err());
        assert!(type_len(b"(").is_err());
        assert!(type_len(b"{s}").is_err());
        assert!(decode(b"s", &[3, 0, 0, 0, b'a', b'b', b'c', 1], false).is_err());
        assert!(message_len(b"x123456789abcdef0").is_err());
    }

    /// A reply to `serial` whose body is the serial (`u`).
    fn echo(serial: u32) -> Vec<u8> {
        let mut m = vec![b'l', 2, 0, 1];
        m.extend_from_slice(&4u32.to_le_bytes());
        m.extend_from_slice(&7u32.to_le_bytes());
        let mut f = vec![5, 1, b'u', 0];
        f.extend_from_slice(&serial.to_le_bytes());
        f.extend_from_slice(&[8, 1, b'g', 0, 1, b'u', 0]);
        m.extend_from_slice(&(f.len() as u32).to_le_bytes());
        m.extend_from_slice(&f);
        while !m.len().is_multiple_of(8) {
            m.push(0);
        }
        m.extend_from_slice(&serial.to_le_bytes());
        m
    }

    #[test]
    fn replies_find_their_calls_across_the_serials_wrap() {
        let (ours, mut peer) = UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let mut c = Connection {
            sock: ours,
            serial: u32::MAX - 3,
            rbuf: Vec::new(),
        };
        // The peer answers each call, the later ones first.
        let answer = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut serials = Vec::new();
            let mut chunk = [0u8; 4096];
            while serials.len() < 8 {
                let n = std::io::Read::read(&mut peer, &mut chunk).unwrap();
                buf.extend_from_slice(&chunk[..n]);
                while let Some(len) = message_len(&buf).unwrap() {
                    let mut d = Decoder {
                        b: &buf[..len],
                        at: 0,
                        big: false,
                        depth: 0,
                    };
                    serials.push(d.values(b"yyyyuu").unwrap()[5].as_u64().unwrap() as u32);
                    buf.drain(..len);
                }
            }
            for s in serials.iter().rev() {
                std::io::Write::write_all(&mut peer, &echo(*s)).unwrap();
            }
            serials
        });
        let call = Call {
            destination: "d",
            path: "/p",
            interface: "i",
            member: "m",
            args: &[],
        };
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        let replies = c.call_all(&[call; 8], 64, deadline).unwrap();
        let serials = answer.join().unwrap();
        assert!(!serials.contains(&0), "{serials:?}");
        for (r, s) in replies.iter().zip(&serials) {
            assert_eq!(r, &Reply::Values(vec![Value::U32(*s)]));
        }
    }

    #[test]
    fn addresses() {
        assert_eq!(unescape("/tmp/a%2cb"), b"/tmp/a,b");
        assert!(
            connect("tcp:host=x")
                .unwrap_err()
                .to_string()
                .contains("accepted")
        );
        let e = connect("unix:path=/nonexistent/bus").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
