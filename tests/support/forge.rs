//! The real parts a review hub talks to, started by the tests: a git remote served over smart
//! HTTP by `git http-backend` behind nginx (through `fcgiwrap`), a sign-in proxy (nginx with
//! basic authentication that names the signed-in user in `X-Forwarded-Email` and
//! `X-Forwarded-User`, connecting to the hub from `127.0.0.2`), and `mdbook-notabene hub`
//! processes. Each runs as the test's user in its own temporary directory and is killed on drop.
//! `.ci/run` installs nginx and fcgiwrap; under `CI` a missing tool fails the test.

use super::common::{self, find_tool, plugin_bin};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The peer address the sign-in proxy connects to the hub from (the hub trusts it alone).
pub const PROXY_PEER: &str = "127.0.0.2";

/// nginx and fcgiwrap, or `None` (outside CI) with a note that the test is skipped.
pub fn tools(test: &str) -> Option<(PathBuf, PathBuf)> {
    let found = (
        find_tool("nginx")
            .or_else(|| Some(PathBuf::from("/usr/sbin/nginx")).filter(|p| p.exists())),
        find_tool("fcgiwrap")
            .or_else(|| Some(PathBuf::from("/usr/sbin/fcgiwrap")).filter(|p| p.exists())),
    );
    match found {
        (Some(n), Some(f)) => Some((n, f)),
        _ if std::env::var_os("CI").is_some() => {
            panic!("nginx and fcgiwrap are not installed (CI is set; .ci/run installs them)")
        }
        _ => {
            eprintln!("note: skipping {test}: nginx or fcgiwrap is not installed");
            None
        }
    }
}

/// A free port on loopback (bound, then let go).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Waits until `port` on loopback takes connections.
fn wait_port(port: u16, what: &str) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what} never listened on {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child process killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An nginx in the foreground, one process, configured by `server` (a `server { … }` block's
/// body, `listen` included) with everything it writes in its own directory.
struct Nginx {
    _child: Killed,
}

impl Nginx {
    fn start(nginx: &Path, dir: &Path, port: u16, http: &str, server: &str) -> Nginx {
        for d in ["logs", "tmp"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let d = dir.display();
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/logs/error.log warn;\nevents {{ worker_connections 1024; }}\nhttp {{\n  access_log off;\n  client_body_temp_path {d}/tmp/body;\n  proxy_temp_path {d}/tmp/proxy;\n  fastcgi_temp_path {d}/tmp/fastcgi;\n  uwsgi_temp_path {d}/tmp/uwsgi;\n  scgi_temp_path {d}/tmp/scgi;\n{http}\n  server {{\n    listen 127.0.0.1:{port};\n{server}\n  }}\n}}\n"
        );
        let path = dir.join("nginx.conf");
        std::fs::write(&path, conf).unwrap();
        let child = Command::new(nginx)
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(&path)
            .arg("-e")
            .arg(dir.join("logs/error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start nginx");
        wait_port(port, "nginx");
        Nginx {
            _child: Killed(child),
        }
    }
}

/// A git remote over smart HTTP: `git http-backend` behind nginx, anonymous pushes allowed.
pub struct GitServer {
    _nginx: Nginx,
    _fcgi: Killed,
    /// Where the bare repositories are (`GIT_PROJECT_ROOT`).
    pub root: PathBuf,
    /// nginx's port.
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl GitServer {
    /// Starts one (nginx and fcgiwrap from [`tools`]).
    pub fn start((nginx, fcgiwrap): &(PathBuf, PathBuf)) -> GitServer {
        let dir = common::tempdir();
        let root = dir.path().join("repos");
        std::fs::create_dir_all(&root).unwrap();
        let socket = dir.path().join("fcgi.sock");
        let fcgi = Command::new(fcgiwrap)
            .arg("-s")
            .arg(format!("unix:{}", socket.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start fcgiwrap");
        let start = Instant::now();
        while !socket.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "fcgiwrap made no socket"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let backend = [
            "/usr/lib/git-core/git-http-backend",
            "/usr/libexec/git-core/git-http-backend",
        ]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("git-http-backend (git's CGI)");
        let port = free_port();
        let server = format!(
            "    client_max_body_size 0;\n    location ~ ^/git(/.*)$ {{\n      include {conf}/fastcgi_params;\n      fastcgi_param SCRIPT_FILENAME {backend};\n      fastcgi_param GIT_PROJECT_ROOT {root};\n      fastcgi_param GIT_HTTP_EXPORT_ALL \"\";\n      fastcgi_param PATH_INFO $1;\n      fastcgi_pass unix:{socket};\n    }}\n",
            conf = nginx_conf_dir(nginx),
            root = root.display(),
            socket = socket.display(),
        );
        let nginx = Nginx::start(nginx, &dir.path().join("nginx"), port, "", &server);
        GitServer {
            _nginx: nginx,
            _fcgi: Killed(fcgi),
            root,
            port,
            _dir: dir,
        }
    }

    /// Makes the bare repository `name` from the repository at `from` (every branch), pushes
    /// allowed; returns its URL.
    pub fn publish(&self, name: &str, from: &Path) -> String {
        let bare = self.root.join(name);
        common::git(
            from,
            &["clone", "-q", "--bare", ".", bare.to_str().unwrap()],
        );
        common::git(&bare, &["config", "http.receivepack", "true"]);
        self.url(name)
    }

    /// The URL of the repository `name`.
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/git/{name}", self.port)
    }
}

/// The directory of nginx's own `fastcgi_params` (Debian: `/etc/nginx`).
fn nginx_conf_dir(nginx: &Path) -> String {
    let out = Command::new(nginx).arg("-V").output().expect("nginx -V");
    let text = String::from_utf8_lossy(&out.stderr);
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("--conf-path="))
        .and_then(|p| Path::new(p).parent().map(|d| d.display().to_string()))
        .unwrap_or_else(|| "/etc/nginx".into())
}

/// A reviewer of the sign-in proxy: user name, password, email, display name.
pub type User<'a> = (&'a str, &'a str, &'a str, &'a str);

/// The sign-in proxy: nginx with basic authentication in front of a hub, naming the user in
/// `X-Forwarded-Email` and `X-Forwarded-User` (replacing whatever the client sent).
pub struct Proxy {
    _nginx: Nginx,
    /// Its port.
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Proxy {
    /// Starts one in front of the hub on `upstream` with `users`.
    pub fn start((nginx, _): &(PathBuf, PathBuf), upstream: u16, users: &[User]) -> Proxy {
        let dir = common::tempdir();
        let htpasswd = dir.path().join("htpasswd");
        let lines: String = users
            .iter()
            .map(|(u, p, _, _)| format!("{u}:{{PLAIN}}{p}\n"))
            .collect();
        std::fs::write(&htpasswd, lines).unwrap();
        let map = |field: usize| -> String {
            users
                .iter()
                .map(|u| {
                    let value = if field == 2 { u.2 } else { u.3 };
                    format!("    \"{}\" \"{value}\";\n", u.0)
                })
                .collect()
        };
        let http = format!(
            "  map $remote_user $nb_email {{\n    default \"\";\n{}  }}\n  map $remote_user $nb_name {{\n    default \"\";\n{}  }}\n  map $http_upgrade $connection_upgrade {{\n    default upgrade;\n    \"\" close;\n  }}\n",
            map(2),
            map(3)
        );
        let port = free_port();
        let server = format!(
            "    location / {{\n      auth_basic \"review\";\n      auth_basic_user_file {htpasswd};\n      proxy_pass http://127.0.0.1:{upstream};\n      proxy_bind {PROXY_PEER};\n      proxy_http_version 1.1;\n      proxy_set_header Host $http_host;\n      proxy_set_header Upgrade $http_upgrade;\n      proxy_set_header Connection $connection_upgrade;\n      proxy_set_header X-Forwarded-Email $nb_email;\n      proxy_set_header X-Forwarded-User $nb_name;\n      proxy_read_timeout 120s;\n    }}\n",
            htpasswd = htpasswd.display()
        );
        let nginx = Nginx::start(nginx, &dir.path().join("nginx"), port, &http, &server);
        Proxy {
            _nginx: nginx,
            port,
            _dir: dir,
        }
    }
}

/// A running `mdbook-notabene hub`; killed on drop.
pub struct Hub {
    child: Killed,
    /// Its port.
    pub port: u16,
    /// Its data directory.
    pub data: PathBuf,
    /// What it printed on stderr, as it goes (a file).
    pub log: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

impl Hub {
    /// Starts a hub on `repo` (`args` after the common ones: `--book`, `--branch`…), trusting
    /// the sign-in proxy's address for identity headers, polling every second.
    pub fn start(repo: &str, args: &[&str]) -> Hub {
        let dir = common::tempdir();
        let data = dir.path().join("data");
        let mut hub = Hub::spawn(repo, &data, args, &[]);
        hub._dir = Some(dir);
        hub
    }

    /// [`Hub::start`] with `env` set for it.
    pub fn start_env(repo: &str, args: &[&str], env: &[(&str, &str)]) -> Hub {
        let dir = common::tempdir();
        let data = dir.path().join("data");
        let mut hub = Hub::spawn(repo, &data, args, env);
        hub._dir = Some(dir);
        hub
    }

    /// [`Hub::start`] with its data directory given (a restart keeps its clones).
    pub fn start_in(repo: &str, data: &Path, args: &[&str]) -> Hub {
        Hub::spawn(repo, data, args, &[])
    }

    /// A hub on `repo` whose reviewers are those of the file `reviewers` (no sign-in proxy).
    pub fn start_reviewers(repo: &str, reviewers: &Path, args: &[&str]) -> Hub {
        let dir = common::tempdir();
        let data = dir.path().join("data");
        let mut all = vec!["--reviewers", reviewers.to_str().unwrap()];
        all.extend_from_slice(args);
        let mut hub = Hub::spawn_signed(repo, &data, &all, &[], false);
        hub._dir = Some(dir);
        hub
    }

    /// `hub` on `repo` with `args` (`--poll 1` unless they say otherwise) and `env`.
    fn spawn(repo: &str, data: &Path, args: &[&str], env: &[(&str, &str)]) -> Hub {
        Hub::spawn_signed(repo, data, args, env, true)
    }

    /// [`Hub::spawn`], behind the sign-in proxy's headers (`proxy`) or not.
    fn spawn_signed(
        repo: &str,
        data: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        proxy: bool,
    ) -> Hub {
        let trusted = format!("{PROXY_PEER}/32");
        let sign_in: Vec<&str> = match proxy {
            true => vec![
                "--identity-header",
                "X-Forwarded-Email",
                "--name-header",
                "X-Forwarded-User",
                "--trusted-proxy",
                &trusted,
            ],
            false => Vec::new(),
        };
        std::fs::create_dir_all(data).unwrap();
        let log = data.with_extension("log");
        let stderr = std::fs::File::create(&log).unwrap();
        let mut child = Command::new(plugin_bin())
            .args([
                "hub",
                "--repo",
                repo,
                "--data-dir",
                data.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
            ])
            .args(&sign_in)
            .args(if args.contains(&"--poll") {
                &[][..]
            } else {
                &["--poll", "1"][..]
            })
            .args(args)
            .envs(env.iter().copied())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("NOTABENE_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start the hub");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.trim_end_matches('/').parse().ok())
            .unwrap_or_else(|| {
                panic!(
                    "the hub said {line:?}; its log: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            });
        Hub {
            child: Killed(child),
            port,
            data: data.to_path_buf(),
            log,
            _dir: None,
        }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }

    /// What it printed on stderr so far.
    pub fn said(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// The `Authorization` header of `user` with `password` (basic).
pub fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {token}")
}

/// A repository at `dir` holding book-example under `book-example/` (page ids
/// `book-example/src/…`), everything committed on `main`.
pub fn book_repo(dir: &Path) {
    common::copy_book(&common::book_example(), &dir.join("book-example"));
    common::git_commit_all(dir, "the book");
}

/// Adds, on a new branch `name` of the repository at `repo` (pushed to its `origin`), what
/// `edit` makes of the work tree; `main` is checked out again after.
pub fn push_branch(repo: &Path, name: &str, edit: impl FnOnce(&Path)) {
    common::git(repo, &["checkout", "-q", "-b", name, "main"]);
    edit(repo);
    common::git(repo, &["add", "-A"]);
    common::git(repo, &["commit", "-qm", &format!("{name}: hostile")]);
    common::git(repo, &["push", "-q", "origin", name]);
    common::git(repo, &["checkout", "-q", "main"]);
}

/// `method path` with `body` (none when null) through `proxy`, signed in as `credentials`
/// (user, password; none: no credentials), a write carrying the proxy's own `Origin` as a
/// browser's would: (status, the answer as JSON, or as text when it is not JSON).
pub fn through(
    proxy: &Proxy,
    credentials: Option<(&str, &str)>,
    method: &str,
    path: &str,
    body: &serde_json::Value,
) -> (u16, serde_json::Value) {
    let auth = credentials.map(|(u, p)| basic(u, p));
    let host = format!("127.0.0.1:{}", proxy.port);
    let origin = format!("http://{host}");
    let mut headers: Vec<(&str, &str)> =
        vec![("Content-Type", "application/json"), ("Host", &host)];
    if let Some(a) = &auth {
        headers.push(("Authorization", a));
    }
    if method != "GET" {
        headers.push(("Origin", &origin));
    }
    let bytes = match body.is_null() {
        true => Vec::new(),
        false => body.to_string().into_bytes(),
    };
    let (code, text) = super::serve::request(proxy.port, method, path, &headers, &bytes);
    let v = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
    (code, v)
}

/// Ten reviewers, `r0`…`r9` (password `pw`, email `rN@example.org`, name `Reviewer N`), for
/// the proxies of a load: own them, then hand [`users`] of them to [`Proxy::start`].
pub fn ten_reviewers() -> Vec<(String, String, String, String)> {
    (0..10)
        .map(|i| {
            (
                format!("r{i}"),
                "pw".into(),
                format!("r{i}@example.org"),
                format!("Reviewer {i}"),
            )
        })
        .collect()
}

/// The proxy's users of `owned`.
pub fn users(owned: &[(String, String, String, String)]) -> Vec<User<'_>> {
    owned
        .iter()
        .map(|u| (u.0.as_str(), u.1.as_str(), u.2.as_str(), u.3.as_str()))
        .collect()
}

/// Waits (30 s at most) until `GET path` through `proxy` as `credentials` answers 200 with
/// `text` in it: the hub serves what a push brought.
pub fn wait_served(proxy: &Proxy, credentials: (&str, &str), path: &str, text: &str) {
    super::wait::until(
        Duration::from_secs(30),
        &format!("the hub to serve {text:?} at {path}"),
        || {
            let (code, page) = through(
                proxy,
                Some(credentials),
                "GET",
                path,
                &serde_json::Value::Null,
            );
            (code == 200 && page.as_str().is_some_and(|p| p.contains(text))).then_some(())
        },
    );
}

/// The usual start of a hub test: book-example in a repository (`repo`, under `work`),
/// published on a git server over HTTP (`url`), which is the repository's `origin`.
pub struct Origin {
    /// A directory for the test's own files.
    pub work: tempfile::TempDir,
    /// The repository (`main`, book-example under `book-example/`).
    pub repo: PathBuf,
    /// The git server.
    pub remote: GitServer,
    /// The remote's URL (`book.git`).
    pub url: String,
}

impl Origin {
    /// Starts one with the tools of [`tools`].
    pub fn start(tools: &(PathBuf, PathBuf)) -> Origin {
        let work = common::tempdir();
        let repo = work.path().join("repo");
        book_repo(&repo);
        let remote = GitServer::start(tools);
        let url = remote.publish("book.git", &repo);
        common::git(&repo, &["remote", "add", "origin", &url]);
        Origin {
            work,
            repo,
            remote,
            url,
        }
    }

    /// The remote's bare repository.
    pub fn bare(&self) -> PathBuf {
        self.remote.root.join("book.git")
    }
}
