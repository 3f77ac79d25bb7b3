DROP INDEX approvals_question;
