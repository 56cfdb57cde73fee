CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
-- password = 'SqlHunter2-Secret-Value'
CREATE USER app IDENTIFIED BY 'SqlHunter2-Secret-Value';
