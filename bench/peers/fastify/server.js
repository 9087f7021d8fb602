// SPDX-License-Identifier: MIT
// fastify-server: canal-demo's five endpoints written with fastify 5 on Node.js, a peer a
// developer might pick instead of canal. Same data file, same bodies (V8's JSON.stringify prints
// the data set's numbers as jansson does); bench/run compares them with canal-demo's first.
//
// fastify is installed by bench/run into build/bench/node_modules (never committed); run as
//   NODE_PATH=build/bench/node_modules node bench/peers/fastify/server.js [--port N] [--data FILE]
//
// Plain fastify: logger off, no response schemas (so fastify's default serializer,
// JSON.stringify, writes the JSON), one Node.js process (one JavaScript thread).
'use strict'

const fs = require('fs')
const path = require('path')
const fastify = require('fastify')

let port = 8080
let data = path.join(__dirname, '..', '..', '..', 'examples', 'demo', 'data', 'northwind.json')
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--port' && i + 1 < process.argv.length) port = Number(process.argv[++i])
  else if (process.argv[i] === '--data' && i + 1 < process.argv.length) data = process.argv[++i]
  else {
    console.error('usage: server.js [--port N] [--data FILE]')
    process.exit(2)
  }
}

// The same lookups as examples/demo/northwind.c.
const northwind = JSON.parse(fs.readFileSync(data, 'utf8'))
const employees = northwind.employees
const byEmployee = [northwind.orders]
for (const o of northwind.orders) {
  const id = o.EmployeeID
  if (id >= 1 && id <= 64) (byEmployee[id] = byEmployee[id] || []).push(o)
}

function findEmployee (id) {
  for (const e of employees) if (e.EmployeeID === id) return e
  return null
}

function ordersPage (id, customer, index, size) {
  const out = []
  const list = id >= 0 && id <= 64 ? byEmployee[id] : undefined
  let skip = index * size
  if (!list) return out
  for (const o of list) {
    if (customer !== undefined && o.CustomerID !== customer) continue
    if (skip > 0) { skip--; continue }
    if (out.length === size) break
    out.push(o)
  }
  return out
}

// An optional '-' and decimal digits that fit in int32, else undefined.
function parseInt32 (s) {
  if (typeof s !== 'string' || !/^-?[0-9]+$/.test(s)) return undefined
  const v = Number(s)
  return v >= -2147483648 && v <= 2147483647 ? v : undefined
}

function problem (reply, status, title, detail) {
  const p = { type: 'about:blank', title, status }
  if (detail !== undefined) p.detail = detail
  return reply.code(status).type('application/problem+json').send(JSON.stringify(p))
}

function json (reply, body) {
  return reply.type('application/json').send(JSON.stringify(body))
}

const app = fastify({ logger: false })

app.get('/home/plaintext', (req, reply) => {
  reply.type('text/plain; charset=utf-8').send('Hello, World!')
})

app.get('/home/json', (req, reply) => json(reply, { message: 'Hello, World!' }))

app.get('/api/woo', (req, reply) => json(reply, { id: 1, name: 'Woo' }))

app.get('/home/employee/:id', (req, reply) => {
  const id = parseInt32(req.params.id)
  if (id === undefined) return problem(reply, 404, 'Not Found')
  const e = findEmployee(id)
  if (e === null) return problem(reply, 404, 'Not Found', `no employee with id ${id}`)
  return json(reply, e)
})

function queryInt (q, name, def, min, max, errors) {
  const v = q[name]
  let x = def
  if (Array.isArray(v)) {
    (errors[name] = errors[name] || []).push(`The ${name} field must be given once.`)
  } else if (v !== undefined && (x = parseInt32(v)) === undefined) {
    x = def;
    (errors[name] = errors[name] || []).push(`The value '${v.slice(0, 64)}' is not valid for ${name}.`)
  } else if (x < min || (max !== undefined && x > max)) {
    (errors[name] = errors[name] || []).push(max !== undefined
      ? `The field ${name} must be between ${min} and ${max}.`
      : `The field ${name} must be at least ${min}.`)
  }
  return x
}

app.get('/home/orders/:id', (req, reply) => {
  const id = parseInt32(req.params.id)
  if (id === undefined) return problem(reply, 404, 'Not Found')
  const q = req.query
  const errors = {}
  if (Array.isArray(q.customerid)) errors.customerid = ['The customerid field must be given once.']
  const index = queryInt(q, 'index', 0, 0, undefined, errors)
  const size = queryInt(q, 'size', 10, 1, 100, errors)
  if (Object.keys(errors).length > 0) {
    return reply.code(400).type('application/problem+json').send(JSON.stringify({
      type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
      title: 'One or more validation errors occurred.',
      status: 400,
      errors
    }))
  }
  return json(reply, ordersPage(id, q.customerid, index, size))
})

app.setNotFoundHandler((req, reply) => problem(reply, 404, 'Not Found'))

app.listen({ port, host: '127.0.0.1', backlog: 4096 }, (err) => {
  if (err) {
    console.error(err.message)
    process.exit(1)
  }
  console.error(`fastify-server listening on http://127.0.0.1:${port}`)
})
process.on('SIGTERM', () => process.exit(0))
