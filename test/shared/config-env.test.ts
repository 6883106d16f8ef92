/** shared/config-env.ts: the option reader and value parsers both processes configure with. */
import t from 'tap'
import { ConfigError, boolean, envName, integer, logLevel, optionsHelp, readOptions } from '../../shared/config-env.js'

const OPTIONS = {
  size: { env: 'SERVICE_SIZE', help: 'a size' },
  'api-name': { env: 'SERVICE_API_NAME', help: 'the API name' },
  plain: { env: 'PLAIN', help: 'not renamed' }
}

t.test('readOptions: flag, then the renamed variable, then the SERVICE_ one; empty means unset', async (t) => {
  const { apiName, get } = readOptions(OPTIONS, ['--size', '3'], { SERVICE_SIZE: '1' })
  t.equal(apiName, 'service')
  t.strictSame(get('size'), { variable: '--size', value: '3' })
  t.strictSame(readOptions(OPTIONS, [], { SERVICE_SIZE: '1' }).get('size'), { variable: 'SERVICE_SIZE', value: '1' })
  const renamed = readOptions(OPTIONS, [], { SERVICE_API_NAME: 'my-api', MY_API_SIZE: '2', SERVICE_SIZE: '1', PLAIN: 'p' })
  t.equal(renamed.apiName, 'my-api')
  t.strictSame(renamed.get('size'), { variable: 'MY_API_SIZE', value: '2' })
  t.strictSame(renamed.get('plain'), { variable: 'PLAIN', value: 'p' }, 'variables without SERVICE_ are not renamed')
  t.strictSame(readOptions(OPTIONS, [], { SERVICE_API_NAME: 'x', X_SIZE: '', SERVICE_SIZE: '' }).get('size'), { variable: 'SERVICE_SIZE', value: undefined })
  t.equal(readOptions(OPTIONS, ['--api-name', 'flagged'], { SERVICE_API_NAME: 'env' }).apiName, 'flagged', 'the flag names the API too')
  t.equal(readOptions(OPTIONS, [], { SERVICE_API_NAME: '' }).apiName, 'service')
  t.throws(() => readOptions(OPTIONS, [], { SERVICE_API_NAME: '9lives' }), ConfigError)
  t.throws(() => readOptions(OPTIONS, ['stray'], {}), /positional/i)
})

t.test('parsers: integer, boolean and log level name the variable in their errors', async (t) => {
  t.equal(integer('V', ' 42 ', 0, 100), 42)
  t.throws(() => integer('V', '4.2', 0, 100), /^V: must be an integer/)
  t.throws(() => integer('V', '101', 0, 100), /^V: must be between 0 and 100, got 101/)
  for (const yes of ['true', 'TRUE', '1', 'yes', 'on']) t.equal(boolean('B', yes), true)
  for (const no of ['false', '0', 'No', 'off ']) t.equal(boolean('B', no), false)
  t.throws(() => boolean('B', 'nope'), /^B: must be true or false/)
  t.equal(logLevel('L', undefined), 'info')
  t.equal(logLevel('L', 'trace'), 'trace')
  t.throws(() => logLevel('L', 'verbose'), /^L: must be one of/)
  t.equal(envName('SERVICE_X', 'service'), 'SERVICE_X')
  t.equal(envName('SERVICE_X', 'a-b'), 'A_B_X')
  t.match(optionsHelp(OPTIONS), /--size\s+SERVICE_SIZE\s+a size/)
})
