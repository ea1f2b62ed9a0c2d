-- A page of the user's sessions (GET /api/sessions), as 006 made it, but capped at 101 rows: the
-- route's largest page is 100, and the store asks for one row more to learn whether a next page
-- exists. Capped at 100, a page of 100 never said so, and the sessions past the 100th could not
-- be reached with limit=100.
-- Idempotent: the local stack applies every migration at each boot.

create or replace function list_sessions(
  p_user_id text,
  p_limit int,
  p_after_updated_at timestamptz default null,
  p_after_session_id text default null
) returns table (session_id text, project_id text, name text, created_at timestamptz, updated_at timestamptz, message_count int)
language sql
stable
set search_path = public
as $$
  select s.session_id, s.project_id, s.name, s.created_at, date_trunc('milliseconds', s.updated_at), s.message_count
    from agent_sessions s
   where s.user_id = p_user_id
     and (p_after_updated_at is null
          or (date_trunc('milliseconds', s.updated_at), s.session_id) < (p_after_updated_at, p_after_session_id))
   order by date_trunc('milliseconds', s.updated_at) desc, s.session_id desc
   limit least(greatest(p_limit, 1), 101);
$$;
