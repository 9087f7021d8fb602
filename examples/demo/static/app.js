// Fetches the JSON route from the page's origin and shows the answer.
fetch('/home/json').then(r => r.json()).then(j => {
    const p = document.createElement('p');
    p.textContent = 'GET /home/json says: ' + j.message;
    document.body.appendChild(p);
});
