// Type-checked by test_clients.py: each line below must be a type error
// (the test counts them by line). A misspelled option is caught before
// the program runs, as the client refuses it at run time.
import { Isobox } from 'isobox';

const box = new Isobox('http://127.0.0.1:8090', { timeout: 5 });            // line 6: timeoutMs
box.execute('python', { code: 'x', limit: { wallTimeMs: 1 } });             // line 7: limits
box.execute('python', 'x', { code: 'y' });                                  // line 8: code twice
box.session('python', 'notebook');                                          // line 9: shell or kernel
box.execute('python', 'x', { limits: { wallTime: 1 } });                    // line 10: wallTimeMs
