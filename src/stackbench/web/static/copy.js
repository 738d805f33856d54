// stackbench serve's one script, served from this file (the CSP allows script from the server itself
// only, never inline): a button with data-copy="ID" copies the value of the element with that id and says
// so. Without JavaScript the buttons stay hidden, and the text field they copy from is there to select
// and copy by hand: no task needs this file.
"use strict";

function copyByHand(field) {
  field.focus();
  field.select();
  try {
    return document.execCommand("copy");
  } catch (error) {
    return false;
  }
}

document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    var status = document.getElementById(button.getAttribute("data-copy") + "-status");
    if (!field) {
      return;
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      var said = function (text) {
        if (status) {
          status.textContent = text;
        }
      };
      var fallback = function () {
        said(copyByHand(field) ? "Copied." : "Select the text and copy it (Ctrl+C).");
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(function () { said("Copied."); }, fallback);
      } else {
        fallback();
      }
    });
  });
});
