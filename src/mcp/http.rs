//! Streamable HTTP transport (stub while the stdio transport is proven).
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Outgoing, Transport};
use crate::error::{Error, Result};

pub struct HttpTransport;

impl HttpTransport {
    pub fn new(_url: &str, _headers: &[(String, String)], _timeout: Duration) -> Result<Self> {
        Err(Error::new("HTTP transport not implemented yet"))
    }
}

impl Transport for HttpTransport {
    fn send(&mut self, _out: Outgoing<'_>, _deadline: Instant) -> Result<()> {
        unreachable!()
    }
    fn recv(&mut self, _deadline: Instant) -> Result<Value> {
        unreachable!()
    }
    fn close(&mut self) {}
    fn describe(&self) -> String {
        String::new()
    }
}
