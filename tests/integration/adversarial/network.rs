//! The network with `security.network` off (the default): a public address, a listener on
//! the host's loopback (outside the sandbox), and a server the command starts itself on
//! loopback, which a test suite must be able to use.

use super::machine::machine;
use super::{Scratch, lines, missing};

/// Tries each connection and prints the errno name (or `connected`).
const PROBE: &str = r#"
import errno, socket, sys
def attempt(addr):
    try:
        socket.create_connection(addr, timeout=3).close()
        return "connected"
    except OSError as error:
        return errno.errorcode.get(error.errno, type(error).__name__)
print("public", attempt(("1.1.1.1", 53)))
print("host-loopback", attempt(("127.0.0.1", int(sys.argv[1]))))
try:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    print("own-loopback", attempt(server.getsockname()))
except OSError as error:
    print("own-loopback", errno.errorcode.get(error.errno))
"#;

#[test]
fn network_off_reaches_neither_the_internet_nor_the_hosts_loopback_but_keeps_its_own() {
    let scratch = Scratch::new("");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let outcome = scratch.exec(&["python3", "-c", PROBE, &port]);
    let machine = machine();
    let sandbox = &outcome["sandbox"];
    if machine.namespaces {
        assert_eq!(
            (lines(&outcome), &sandbox["network"], &sandbox["loopback"]),
            (
                vec![
                    "public ENETUNREACH".to_owned(),
                    "host-loopback ECONNREFUSED".to_owned(),
                    "own-loopback connected".to_owned()
                ],
                &serde_json::json!("namespace"),
                &serde_json::json!(true)
            ),
            "{outcome:#}"
        );
    } else if machine.seccomp {
        assert_eq!(
            (lines(&outcome), &sandbox["network"], &sandbox["loopback"]),
            (
                vec![
                    "public EPERM".to_owned(),
                    "host-loopback EPERM".to_owned(),
                    "own-loopback EPERM".to_owned()
                ],
                &serde_json::json!("seccomp"),
                &serde_json::json!(false)
            ),
            "{outcome:#}"
        );
        assert!(missing(&outcome).contains("namespaces:"), "{outcome:#}");
    } else {
        assert_eq!(
            (lines(&outcome)[1].as_str(), &sandbox["network"]),
            (
                "host-loopback connected",
                &serde_json::json!("not-isolated")
            ),
            "{outcome:#}"
        );
        assert!(missing(&outcome).contains("namespaces:"), "{outcome:#}");
    }
}

#[test]
fn network_allowed_by_the_config_is_recorded_as_allowed() {
    let scratch = Scratch::new("security:\n  network: true\n");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let outcome = scratch.exec(&["python3", "-c", PROBE, &port]);
    assert_eq!(
        (
            lines(&outcome)[1..].to_vec(),
            &outcome["sandbox"]["network"]
        ),
        (
            vec![
                "host-loopback connected".to_owned(),
                "own-loopback connected".to_owned()
            ],
            &serde_json::json!("allowed")
        ),
        "{outcome:#}"
    );
}
