// The login screen: the user pastes an API token (docs/api.md, "Access");
// it is kept in sessionStorage and sent as a bearer token on every request.

import * as api from './api.js';
import {h, replace, field} from './dom.js';

export function render(main, {message, onToken}) {
  const input = h('input', {type: 'password', name: 'token', autocomplete: 'off', required: true,
    'aria-describedby': 'login-help'});
  const status = h('div', {id: 'login-status', role: 'alert'});
  const form = h('form', {class: 'login', onsubmit: async (e) => {
    e.preventDefault();
    api.setToken(input.value.trim());
    replace(status);
    if (!(await onToken())) input.focus();
  }},
  h('h1', {}, 'Sign in to chime'),
  message ? h('p', {class: 'error-box'}, message) : null,
  field('login-token', 'API token', input, {wide: true}),
  h('p', {id: 'login-help', class: 'muted'},
      'A token from api_tokens in the daemon\'s chime.yaml. It is kept in this browser tab only.'),
  status,
  h('button', {type: 'submit'}, 'Sign in'));
  replace(main, form);
  input.focus();
}
