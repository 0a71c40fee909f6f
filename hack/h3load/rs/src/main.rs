//! h3load-rs: an h2load-like HTTP/3 load client on quinn (QUIC) and hyperium's h3, Rust, one
//! thread by default (as h2load's -t1). -c connections, each with -m requests in flight (one task
//! per stream slot, closed loop); POSTs the -d body for --warm-up-time then -D seconds and prints
//! h2load's summary lines plus latency p50/p99 of the measured window. Trusts any server
//! certificate (a benchmark's throwaway one).
//!
//! Usage: h3load-rs [-cN] [-mN] [-tN] [-DSECONDS] [--warm-up-time=SECONDS] [-d FILE]
//!        [-H 'name: value'] https://HOST:PORT/PATH
use bytes::Bytes;
use std::net::ToSocketAddrs;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Default)]
struct Stats {
    started: u64,
    done: u64,
    ok: u64,
    c3: u64,
    c4: u64,
    c5: u64,
    errored: u64,
    latency: Vec<u64>, // nanoseconds
}

struct Opts {
    conns: usize,
    streams: usize,
    threads: usize,
    seconds: f64,
    warmup: f64,
    body: Bytes,
    headers: Vec<(String, String)>,
    url: http::Uri,
}

fn secs(s: &str) -> f64 {
    s.trim_end_matches('s').parse().expect("a number of seconds")
}

fn parse() -> Opts {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut o = Opts {
        conns: 1,
        streams: 1,
        threads: 1,
        seconds: 5.0,
        warmup: 0.0,
        body: Bytes::new(),
        headers: vec![],
        url: http::Uri::default(),
    };
    let mut url = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        // -xN or -x N
        let val = |i: &mut usize| -> String {
            if a.len() > 2 {
                a[2..].to_string()
            } else {
                *i += 1;
                args[*i].clone()
            }
        };
        if let Some(v) = a.strip_prefix("--warm-up-time=") {
            o.warmup = secs(v);
        } else if a == "-d" {
            i += 1;
            o.body = Bytes::from(std::fs::read(&args[i]).expect("-d: the body file"));
        } else if a == "-H" {
            i += 1;
            let (k, v) = args[i].split_once(':').expect("-H 'name: value'");
            o.headers.push((k.trim().to_lowercase(), v.trim().to_string()));
        } else if a.starts_with("-c") {
            o.conns = val(&mut i).parse().unwrap();
        } else if a.starts_with("-m") {
            o.streams = val(&mut i).parse().unwrap();
        } else if a.starts_with("-t") {
            o.threads = val(&mut i).parse().unwrap();
        } else if a.starts_with("-D") {
            o.seconds = secs(&val(&mut i));
        } else if a.starts_with("https://") {
            url = Some(a.parse().expect("the URL"));
        } else {
            eprintln!("h3load-rs: unknown argument {a}");
            std::process::exit(2);
        }
        i += 1;
    }
    o.url = url.unwrap_or_else(|| {
        eprintln!("h3load-rs: give the URL, https://HOST:PORT/PATH");
        std::process::exit(2)
    });
    o
}

#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &rustls::pki_types::CertificateDer<'_>,
        d: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &rustls::pki_types::CertificateDer<'_>,
        d: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(m, c, d, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn main() {
    let o = Arc::new(parse());
    let rt = if o.threads <= 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(o.threads).enable_all().build()
    }
    .unwrap();
    rt.block_on(run(o));
    // Do not wait for a graceful close: the numbers are out.
    std::process::exit(0);
}

async fn run(o: Arc<Opts>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let qcfg = quinn::ClientConfig::new(Arc::new(
        quinn::crypto::rustls::QuicClientConfig::try_from(tls).unwrap(),
    ));
    let host = o.url.host().unwrap().to_string();
    let addr = (host.as_str(), o.url.port_u16().unwrap_or(443))
        .to_socket_addrs()
        .unwrap()
        .next()
        .unwrap();

    let mut senders = vec![];
    for _ in 0..o.conns {
        // One UDP socket per connection, as h2load and msgbench have.
        let mut ep = quinn::Endpoint::client("0.0.0.0:0".parse().unwrap()).unwrap();
        ep.set_default_client_config(qcfg.clone());
        let conn = ep.connect(addr, &host).unwrap().await.expect("QUIC handshake");
        let (mut driver, send) = h3::client::new(h3_quinn::Connection::new(conn)).await.unwrap();
        tokio::spawn(async move {
            let _ = futures::future::poll_fn(|cx| driver.poll_close(cx)).await;
            drop(ep);
        });
        senders.push(send);
    }
    let t0 = Instant::now();
    let start = t0 + Duration::from_secs_f64(o.warmup);
    let end = start + Duration::from_secs_f64(o.seconds);
    let mut tasks = vec![];
    for s in &senders {
        for _ in 0..o.streams {
            let mut send = s.clone();
            let o = o.clone();
            tasks.push(tokio::spawn(async move {
                let mut st = Stats::default();
                while Instant::now() < end {
                    let t = Instant::now();
                    let mut req = http::Request::builder().method("POST").uri(o.url.clone());
                    for (k, v) in &o.headers {
                        req = req.header(k, v);
                    }
                    let req = req.header("content-length", o.body.len()).body(()).unwrap();
                    let status = async {
                        let mut stream = send.send_request(req).await?;
                        stream.send_data(o.body.clone()).await?;
                        stream.finish().await?;
                        let resp = stream.recv_response().await?;
                        while stream.recv_data().await?.is_some() {}
                        Ok::<u16, Box<dyn std::error::Error + Send + Sync>>(resp.status().as_u16())
                    }
                    .await;
                    let now = Instant::now();
                    if t >= start && now <= end {
                        st.started += 1;
                    }
                    if now < start || now > end {
                        continue;
                    }
                    match status {
                        Ok(code) => {
                            st.done += 1;
                            match code {
                                200..=299 => st.ok += 1,
                                300..=399 => st.c3 += 1,
                                400..=499 => st.c4 += 1,
                                _ => st.c5 += 1,
                            }
                            st.latency.push((now - t).as_nanos() as u64);
                        }
                        Err(e) => {
                            st.errored += 1;
                            if st.errored == 1 {
                                eprintln!("h3load-rs: {e}");
                            }
                            tokio::time::sleep(Duration::from_millis(1)).await;
                        }
                    }
                }
                st
            }));
        }
    }
    let mut all = Stats::default();
    for t in tasks {
        let s = t.await.unwrap();
        all.started += s.started;
        all.done += s.done;
        all.ok += s.ok;
        all.c3 += s.c3;
        all.c4 += s.c4;
        all.c5 += s.c5;
        all.errored += s.errored;
        all.latency.extend(s.latency);
    }
    let l = &mut all.latency;
    l.sort_unstable();
    let secs = o.seconds;
    println!(
        "finished in {:.2}s, {:.2} req/s, {} B/s body",
        secs,
        all.done as f64 / secs,
        (all.done as f64 * o.body.len() as f64 / secs) as u64
    );
    println!(
        "requests: {} total, {} started, {} done, {} succeeded, {} failed, {} errored, 0 timeout",
        all.done + all.errored,
        all.started,
        all.done,
        all.ok,
        all.done - all.ok + all.errored,
        all.errored
    );
    println!("status codes: {} 2xx, {} 3xx, {} 4xx, {} 5xx", all.ok, all.c3, all.c4, all.c5);
    let n = l.len();
    if n > 0 {
        let mean = l.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
        let sd = (l.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        let d = |ns: f64| {
            if ns >= 1e6 { format!("{:.2}ms", ns / 1e6) } else { format!("{}us", (ns / 1e3) as u64) }
        };
        println!("time for request: {} {} {} {}", d(l[0] as f64), d(l[n - 1] as f64), d(mean), d(sd));
        println!("latency p50 {} p99 {}", d(l[n / 2] as f64), d(l[(n * 99 / 100).min(n - 1)] as f64));
    }
}
