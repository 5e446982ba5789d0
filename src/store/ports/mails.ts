export interface MailRow {
  id: number;
  mail_key: string;
  kind: string;
  event_id: string | null;
  job_id: number;
  service_id: string;
  to_address: string;
  subject: string;
  message_id: string;
  state: "sending" | "sent";
  attempts: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

export interface MailOps {
  get(key: string): Promise<MailRow | undefined>;
  /** Records, before the SMTP conversation, that the mail is being sent (a sent row is never reopened). */
  begin(row: Pick<MailRow, "mail_key" | "kind" | "event_id" | "job_id" | "service_id" | "to_address" | "subject" | "message_id">): Promise<void>;
  failed(key: string, error: string): Promise<void>;
}
