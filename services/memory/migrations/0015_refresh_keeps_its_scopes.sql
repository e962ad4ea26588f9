-- 0015: a refresh that asks for fewer scopes narrows the access token it is answered with, never
-- the grant. OAuth 2.1 §4.3.3 (RFC 6749 §6): the new refresh token's scope must be identical to
-- the one presented. 0005's version stored the narrowed set in the new refresh token, so asking
-- once for a read-only access token lost the grant's other scopes for the rest of the family.
-- Same signature, so the owner and the grant to threengram_app stay as 0005 set them.
CREATE OR REPLACE FUNCTION rotate_oauth_refresh_token(p_token_hash text, p_client_id text, p_new_hash text,
                                                      p_expires_at timestamptz, p_scopes text[])
RETURNS TABLE (outcome text, tenant_id uuid, user_id uuid, scopes text[], resource text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
#variable_conflict use_column
DECLARE t public.oauth_refresh_tokens%ROWTYPE;
  granted text[];
BEGIN
  SELECT r.* INTO t FROM public.oauth_refresh_tokens r WHERE r.token_hash = p_token_hash FOR UPDATE;
  IF NOT FOUND OR t.client_id <> p_client_id THEN
    RETURN QUERY SELECT 'unknown'::text, NULL::uuid, NULL::uuid, NULL::text[], NULL::text;
    RETURN;
  END IF;
  IF t.rotated_at IS NOT NULL OR t.revoked_at IS NOT NULL THEN
    UPDATE public.oauth_refresh_tokens r SET revoked_at = now() WHERE r.family_id = t.family_id AND r.revoked_at IS NULL;
    RETURN QUERY SELECT 'replayed'::text, NULL::uuid, NULL::uuid, NULL::text[], NULL::text;
    RETURN;
  END IF;
  IF t.expires_at <= now() THEN
    RETURN QUERY SELECT 'expired'::text, NULL::uuid, NULL::uuid, NULL::text[], NULL::text;
    RETURN;
  END IF;
  -- The access token's scopes: those asked for, within the grant.
  granted := coalesce(p_scopes, t.scopes);
  IF cardinality(granted) = 0 OR NOT granted <@ t.scopes THEN
    RETURN QUERY SELECT 'invalid_scope'::text, NULL::uuid, NULL::uuid, NULL::text[], NULL::text;
    RETURN;
  END IF;
  UPDATE public.oauth_refresh_tokens r SET rotated_at = now() WHERE r.token_hash = p_token_hash;
  -- The successor carries the grant unchanged.
  INSERT INTO public.oauth_refresh_tokens (token_hash, tenant_id, user_id, client_id, family_id, scopes, resource, expires_at)
  VALUES (p_new_hash, t.tenant_id, t.user_id, t.client_id, t.family_id, t.scopes, t.resource, p_expires_at);
  UPDATE public.oauth_clients c SET last_used_at = now() WHERE c.client_id = t.client_id;
  RETURN QUERY SELECT 'rotated'::text, t.tenant_id, t.user_id, granted, t.resource;
END $$;
