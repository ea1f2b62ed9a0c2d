-- Retention re-reads a listed session's last turn under the session's lease before it deletes
-- anything (graph/chat/retention.ts): a sweep lists a page of idle sessions and deletes them one by
-- one, and a session that took a turn since it was listed is active again, not expired. A turn
-- records its transcript (moving updated_at) under the same lease, so the answer holds while the
-- sweep holds it. Idempotent: the local stack applies every migration at each boot.

create or replace function session_idle(p_session_id text, p_before timestamptz) returns boolean
language sql
stable
set search_path = public
as $$
  select not exists (select 1 from agent_sessions s where s.session_id = p_session_id and s.updated_at >= p_before)
$$;

do $$
begin
  revoke all on function session_idle(text, timestamptz) from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function session_idle(text, timestamptz) from anon, authenticated;
  end if;
end;
$$;
