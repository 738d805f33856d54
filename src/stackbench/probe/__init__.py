"""Facts about where a test ran: collected once per run, stored with it, read by reports and the audit."""
