// A job's definition typed as JSON (the keys of a job file, docs/jobs.md) in
// a form: the text is parsed here, then handed to submit(body), whose
// ApiError (the server names the field that is wrong) is shown in the form.
// Used to create a job (jobs.js) and to replace one (job.js).

import {h, replace, errorBox, field} from './dom.js';

// {id, label, help, text, submitLabel, submit: async (body) => void, cancel}
export function definitionForm({id, label, help, text, submitLabel, submit, cancel}) {
  const area = h('textarea', {spellcheck: 'false', 'aria-describedby': `${id}-help`});
  area.value = text;
  const status = h('div', {role: 'alert'});
  const form = h('form', {class: 'panel', onsubmit: async (e) => {
    e.preventDefault();
    let body;
    try {
      body = JSON.parse(area.value);
    } catch (err) {
      replace(status, errorBox(new Error(`Not valid JSON: ${err.message}`)));
      return;
    }
    try {
      await submit(body);
    } catch (err) {
      replace(status, errorBox(err));
    }
  }},
  field(id, label, area, {wide: true}),
  h('p', {id: `${id}-help`, class: 'muted'}, help),
  status,
  h('div', {class: 'actions'},
      h('button', {type: 'submit'}, submitLabel),
      h('button', {type: 'button', class: 'secondary', onclick: cancel}, 'Cancel')));
  return {form, focus: () => area.focus()};
}
