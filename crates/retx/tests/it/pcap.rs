//! Pcap export end to end: a tiny lossless run's capture holds exactly the packets the
//! simulation sent and received at the captured hosts, with their PSNs, opcodes and lengths;
//! `[output] pcap` is validated with one-line errors naming the field.

use retx::transport::common::psn::Psn;
use retx::wire::aeth::{NakCode, Syndrome};
use retx::wire::bth::opcode;
use retx::wire::frame::{ip_addr, Repr};

/// (timestamp in ns, frame) of every record of a nanosecond libpcap file.
fn records(file: &[u8]) -> Vec<(u64, &[u8])> {
    assert_eq!(&file[..4], &0xa1b2_3c4du32.to_le_bytes(), "nanosecond magic");
    assert_eq!(&file[20..24], &1u32.to_le_bytes(), "LINKTYPE_ETHERNET");
    let mut out = Vec::new();
    let mut at = 24;
    let word = |i: usize| u32::from_le_bytes(file[i..i + 4].try_into().unwrap());
    while at < file.len() {
        let (sec, ns, incl, orig) = (word(at), word(at + 4), word(at + 8) as usize, word(at + 12) as usize);
        assert_eq!(incl, orig, "frames are whole");
        assert!(ns < 1_000_000_000);
        out.push((sec as u64 * 1_000_000_000 + ns as u64, &file[at + 16..at + 16 + incl]));
        at += 16 + incl;
    }
    assert_eq!(at, file.len());
    out
}

fn scenario(pcap: &str, loss: &str) -> String {
    format!(
        r#"
        name = "pcap"
        duration = "1ms"
        [topology]
        kind = "single-switch"
        hosts = 4
        [transport]
        recovery = "gbn"
        cc = "none"
        [workload]
        kind = "flow-list"
        flows = [{{ src = "h0", dst = "h1", size = "10000B" }}]
        [output]
        pcap = {pcap}
        {loss}
        "#
    )
}

#[test]
fn a_lossless_capture_has_exactly_the_simulated_packets() {
    let (out, file) = retx::run_toml_pcap(&scenario(r#"{ hosts = ["h0", "h1"] }"#, "")).unwrap();
    let file = file.expect("a pcap was asked for");
    let flow = &out.flows[0];
    assert!(flow.finish.is_some());
    let frames: Vec<(u64, Repr, usize)> = records(&file).into_iter().map(|(t, f)| (t, Repr::parse(f).unwrap(), f.len())).collect();
    // 10 data packets (9 x 1024 B + 784 B) and 10 ACKs, each seen by the sender and the receiver.
    let data: Vec<_> = frames.iter().filter(|(_, r, _)| r.aeth.is_none()).collect();
    let acks: Vec<_> = frames.iter().filter(|(_, r, _)| r.aeth.is_some()).collect();
    assert_eq!((data.len(), acks.len(), frames.len()), (20, 20, 40));
    assert!(frames.windows(2).all(|w| w[0].0 <= w[1].0), "records in time order");
    let (h0, h1) = (ip_addr(0), ip_addr(1));
    let initial = data[0].1.bth.psn;
    assert!(data.iter().all(|(_, r, _)| (r.ip.src_addr, r.ip.dst_addr) == (h0, h1)), "data goes h0 -> h1");
    // Each data PSN appears twice (sent at h0, received at h1 later), in order, with its
    // payload and the opcode of its place in the message.
    for i in 0..10u32 {
        let psn = Psn::new(initial.value() + i);
        let seen: Vec<_> = data.iter().filter(|(_, r, _)| r.bth.psn == psn).collect();
        assert_eq!(seen.len(), 2, "PSN {i}");
        assert!(seen[0].0 < seen[1].0, "sent before received");
        let payload = if i < 9 { 1024 } else { 10_000 - 9 * 1024 };
        // The first packet's RETH says where the whole message goes (16 B more).
        let reth = if i == 0 { Some(retx::wire::reth::Repr { virtual_address: 0, rkey: 3, dma_len: 10_000 }) } else { None };
        for (_, r, len) in &seen {
            assert_eq!(r.payload_len, payload);
            assert_eq!(r.reth, reth);
            assert_eq!(*len, 58 + 16 * reth.is_some() as usize + payload + r.bth.pad as usize);
            let want = match i {
                0 => opcode::RC_RDMA_WRITE_FIRST,
                9 => opcode::RC_RDMA_WRITE_LAST,
                _ => opcode::RC_RDMA_WRITE_MIDDLE,
            };
            assert_eq!((r.bth.opcode, r.bth.ack_req), (want, i == 9));
            assert_eq!(r.bth.dest_qp, 3, "flow 0's responder");
        }
    }
    // One ACK per data packet (ack_interval 1), naming the PSN it acknowledges; the last one
    // completes the message (MSN 1).
    for i in 0..10u32 {
        let psn = Psn::new(initial.value() + i);
        let seen: Vec<_> = acks.iter().filter(|(_, r, _)| r.bth.psn == psn).collect();
        assert_eq!(seen.len(), 2, "ACK of PSN {i}");
        for (_, r, len) in &seen {
            let aeth = r.aeth.unwrap();
            assert_eq!(aeth.syndrome, Syndrome::Ack { credits: 31 });
            assert_eq!(aeth.msn, (i == 9) as u32);
            assert_eq!((r.bth.opcode, r.bth.dest_qp, r.ip.src_addr, *len), (opcode::RC_ACKNOWLEDGE, 2, h1, 62));
        }
    }
    assert_eq!(flow.retx_bytes, 0);
}

#[test]
fn a_receiver_only_capture_sees_the_loss_and_the_go_back() {
    let loss = "[[loss]]\nat = \"link:sw0->h1\"\nrate = 0.2";
    let (out, file) = retx::run_toml_pcap(&scenario(r#"{ hosts = ["h1"] }"#, loss)).unwrap();
    assert!(out.flows[0].finish.is_some());
    let frames: Vec<Repr> = records(&file.unwrap()).into_iter().map(|(_, f)| Repr::parse(f).unwrap()).collect();
    let naks: Vec<&Repr> = frames.iter().filter(|r| r.aeth.is_some_and(|a| a.syndrome == Syndrome::Nak(NakCode::PsnSequenceError))).collect();
    assert!(!naks.is_empty(), "20 % loss on h1's link draws a NAK");
    // After the first NAK (expected PSN e), the next data h1 receives is PSN e or, if that is
    // lost again, a later NAK's; each NAK names a PSN h1 had not received.
    let first_nak = frames.iter().position(|r| std::ptr::eq(r, naks[0])).unwrap();
    let e = naks[0].bth.psn;
    let received_before: Vec<Psn> = frames[..first_nak].iter().filter(|r| r.aeth.is_none()).map(|r| r.bth.psn).collect();
    assert!(!received_before.contains(&e));
    let data_after = frames[first_nak..].iter().filter(|r| r.aeth.is_none() && r.ip.dst_addr == ip_addr(1)).map(|r| r.bth.psn);
    assert!(data_after.clone().any(|p| p == e), "the NAKed PSN arrives again");
}

#[test]
fn max_packets_caps_the_file() {
    let (_, file) = retx::run_toml_pcap(&scenario(r#"{ hosts = ["h0"], max_packets = 3 }"#, "")).unwrap();
    assert_eq!(records(&file.unwrap()).len(), 3);
}

#[test]
fn runs_without_pcap_return_none() {
    let text = scenario("{ hosts = [\"h0\"] }", "").replace("pcap = { hosts = [\"h0\"] }", "");
    assert!(retx::run_toml_pcap(&text).unwrap().1.is_none());
}

#[test]
fn bad_pcap_fields_are_one_line_errors_naming_the_field() {
    let cases = [
        (r#"{ hosts = ["h9"] }"#, r#"output.pcap.hosts: "h9" is not a host (hosts are h0..h3)"#),
        (r#"{ hosts = ["sw0"] }"#, r#"output.pcap.hosts: "sw0" is a switch, not a host"#),
        (r#"{ hosts = ["h0", "h0"] }"#, r#"output.pcap.hosts: "h0" is listed twice"#),
        (r#"{ hosts = [] }"#, r#"output.pcap.hosts: name at least one host, e.g. ["h0"]"#),
        (r#"{ hosts = ["h0"], max_packets = 0 }"#, "output.pcap.max_packets: 0 is out of range (allowed 1..=10000000)"),
        (r#"{ hosts = ["h0"], file = "" }"#, r#"output.pcap.file: "" is empty (name a file, e.g. "trace.pcap")"#),
        // The file stays inside the output folder (config/output.rs has the whole policy).
        (r#"{ hosts = ["h0"], file = "../../x.pcap" }"#, r#"output.pcap.file: "../../x.pcap" leaves the output folder or has an empty component: name a file inside it (no '..', no '//', no trailing '/')"#),
        (r#"{ hosts = ["h0"], file = "flows.parquet" }"#, r#"output.pcap.file: "flows.parquet" is one of the run's own outputs (flows.parquet); choose another name"#),
    ];
    for (pcap, want) in cases {
        let Err(e) = retx::run_toml_pcap(&scenario(pcap, "")) else { panic!("{pcap} was accepted") };
        let e = e.to_string();
        assert_eq!(e, want);
        assert!(!e.contains('\n'));
    }
    let Err(e) = retx::run_toml_pcap(&scenario(r#"{ hosts = ["h0"], snaplen = 64 }"#, "")) else { panic!("snaplen was accepted") };
    assert_eq!(e.field, "output.pcap.snaplen");
    assert!(e.message.contains("unknown field `snaplen`"), "{e}");
}
